package server

import (
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestAuthTokenOfFindsTheEmbeddedField(t *testing.T) {
	t.Parallel()
	type embedsValue struct {
		structs.WriteRequest
	}
	type noToken struct{ Name string }
	type wrongKind struct{ AuthToken int }
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
	if got := authTokenOf(&embedsValue{structs.WriteRequest{AuthToken: "e"}}); got != "e" {
		t.Fatalf("a struct of another package embedding WriteRequest: %q", got)
	}
	if got := authTokenOf(&structs.BlobGetRequest{AuthToken: "b"}); got != "b" {
		t.Fatalf("stream opener: %q", got)
	}
	if authTokenOf(&noToken{}) != "" || authTokenOf(&wrongKind{AuthToken: 1}) != "" || authTokenOf(nil) != "" ||
		authTokenOf((*noToken)(nil)) != "" || authTokenOf("x") != "" {
		t.Fatal("a token where there is none")
	}
}

// TestEveryRPCArgumentWithATokenIsCredentialed walks the arguments of
// every registered RPC method: one with an AuthToken field must be
// structs.Credentialed, reached without an embedded pointer (which may
// be nil), or authorizeRPC would see no credential where the caller
// sent one. The stream openers are structs types, which
// structs.TestEveryCredentialCarrierIsCredentialed covers.
func TestEveryRPCArgumentWithATokenIsCredentialed(t *testing.T) {
	credentialed := reflect.TypeFor[structs.Credentialed]()
	checked := 0
	for name, e := range (&Server{}).endpoints() {
		typ := reflect.TypeOf(e)
		for i := range typ.NumMethod() {
			m := typ.Method(i)
			if !m.IsExported() || m.Type.NumIn() != 3 || m.Type.In(1).Kind() != reflect.Pointer {
				continue
			}
			args := m.Type.In(1)
			f, ok := args.Elem().FieldByName("AuthToken")
			if !ok || f.Type.Kind() != reflect.String {
				continue
			}
			checked++
			if !args.Implements(credentialed) {
				t.Errorf("%s.%s: %s has an AuthToken but is not structs.Credentialed", name, m.Name, args)
			}
			for j := range f.Index[:len(f.Index)-1] {
				if args.Elem().FieldByIndex(f.Index[:j+1]).Type.Kind() == reflect.Pointer {
					t.Errorf("%s.%s: %s reaches its AuthToken through an embedded pointer", name, m.Name, args)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d RPC arguments carry a token: the walk is broken", checked)
	}
}
