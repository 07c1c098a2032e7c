package diskxfer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestPrepare: the destination answers the source's prepare call with
// what it prepared, and refuses a missing or wrong token, an unknown
// allocation and one not waiting for a migration, each with its own
// status; a dead destination is an error, so the migration does not
// start.
func TestPrepare(t *testing.T) {
	calls := 0
	prepare := func(_ context.Context, allocID, token string) (Prepared, error) {
		calls++
		switch {
		case allocID == "busy":
			return Prepared{}, fmt.Errorf("%w: the allocation runs", ErrBusy)
		case allocID != "a2":
			return Prepared{}, ErrUnknown
		case token != "tok":
			return Prepared{}, ErrDenied
		}
		return Prepared{ImagePath: "/var/lib/stratus/images/abc"}, nil
	}
	ts := httptest.NewServer(NewServer(nil, nil).WithPrepare(prepare))
	t.Cleanup(ts.Close)
	dst := &structs.DiskSource{AllocID: "a2", URL: ts.URL + MountPath, Token: "tok"}

	p, err := Prepare(t.Context(), nil, dst)
	if err != nil || p.ImagePath != "/var/lib/stratus/images/abc" {
		t.Fatalf("prepare: %+v, %v", p, err)
	}
	for _, c := range []struct {
		alloc, token, want string
	}{
		{"a2", "", "401"},
		{"a2", "other", "403"},
		{"a9", "tok", "404"},
		{"busy", "tok", "409"},
	} {
		d := *dst
		d.AllocID, d.Token = c.alloc, c.token
		if _, err := Prepare(t.Context(), nil, &d); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("prepare %s with token %q: %v, want %s", c.alloc, c.token, err, c.want)
		}
	}
	if calls != 4 { // the tokenless call never reaches prepare
		t.Errorf("%d prepare calls, want 4", calls)
	}
	// A GET is not a prepare: the call is a POST only.
	resp, err := http.Get(ts.URL + MountPath + "a2" + PreparePath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("GET prepare answered %s", resp.Status)
	}

	// An agent older than the call has no route for it: the source
	// tells that from a refusal.
	old := httptest.NewServer(NewServer(nil, nil))
	t.Cleanup(old.Close)
	if _, err := Prepare(t.Context(), nil, &structs.DiskSource{AllocID: "a2", URL: old.URL + MountPath, Token: "tok"}); !errors.Is(err, ErrNoPrepare) {
		t.Errorf("prepare on an older agent: %v, want ErrNoPrepare", err)
	}

	ts.Close()
	if _, err := Prepare(t.Context(), nil, dst); err == nil {
		t.Fatal("a dead destination prepared")
	}
	if _, err := Prepare(t.Context(), nil, &structs.DiskSource{AllocID: "a2", Token: "tok"}); err == nil {
		t.Fatal("a destination without an export prepared")
	}
}
