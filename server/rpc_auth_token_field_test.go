package server

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestAuthTokenOfFindsTheEmbeddedField(t *testing.T) {
	t.Parallel()
	type embedsPointer struct {
		*structs.WriteRequest
	}
	type noToken struct{ Name string }
	type wrongKind struct{ AuthToken int }
	for i := 0; i < 2; i++ { // the second time from the cache
		w := &structs.InstanceCreateRequest{WriteRequest: structs.WriteRequest{AuthToken: "w"}}
		if got := authTokenOf(w); got != "w" {
			t.Fatalf("write request: %q", got)
		}
		q := &structs.InstanceListRequest{QueryOptions: structs.QueryOptions{AuthToken: "q"}}
		if got := authTokenOf(q); got != "q" {
			t.Fatalf("query: %q", got)
		}
		setAuthToken(q, "other")
		if q.AuthToken != "q" {
			t.Fatal("setAuthToken replaced a token")
		}
		empty := &structs.InstanceListRequest{}
		setAuthToken(empty, "s")
		if empty.AuthToken != "s" {
			t.Fatal("setAuthToken left an empty token")
		}
		if got := authTokenOf(&embedsPointer{}); got != "" {
			t.Fatalf("nil embedded pointer: %q", got)
		}
		if got := authTokenOf(&embedsPointer{&structs.WriteRequest{AuthToken: "p"}}); got != "p" {
			t.Fatalf("embedded pointer: %q", got)
		}
		if authTokenOf(&noToken{}) != "" || authTokenOf(&wrongKind{AuthToken: 1}) != "" || authTokenOf(nil) != "" ||
			authTokenOf((*noToken)(nil)) != "" || authTokenOf("x") != "" {
			t.Fatal("a token where there is none")
		}
	}
}
