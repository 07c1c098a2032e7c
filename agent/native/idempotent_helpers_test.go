package native

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// The scaffolding the tests of native keyed writes retried across
// elections (creates and instance actions) share.

// retryRoutes is bootRoutes with the production retry budget.
func retryRoutes(answer func(method string, args, reply any) error) (http.Handler, *fakeRPC) {
	f := &fakeRPC{answer: answer}
	return New(Config{RPC: f, Logger: hclog.NewNullLogger(), WriteRetry: time.Minute}).Handler(), f
}

// electionRoutes is retryRoutes over servers that fail the first
// failures calls of method with lost, as a leader change does, and then
// answer every call with fill.
func electionRoutes(method string, failures int, lost string, fill func(reply any)) (http.Handler, *fakeRPC) {
	return retryRoutes(func(m string, _, reply any) error {
		if m == method && failures > 0 {
			failures--
			return errors.New(lost)
		}
		fill(reply)
		return nil
	})
}

// requestKey is the key a keyed write's request carries.
func requestKey(t *testing.T, args any) string {
	t.Helper()
	switch a := args.(type) {
	case *structs.InstanceCreateRequest:
		return a.IdempotencyKey
	case *structs.InstanceTaskRequest:
		return a.IdempotencyKey
	}
	t.Fatalf("%T is not a keyed write", args)
	return ""
}

// checkKeyedRetries posts body to path with the Idempotency-Key
// "mine-1" over routes whose servers fail the first two attempts
// (electionRoutes): the answer must be a 200 that holds want, after
// three attempts that all carried the client's key. Then it posts
// unkeyed, which must carry a key of the agent's own. what names the
// write in messages.
func checkKeyedRetries(t *testing.T, h http.Handler, f *fakeRPC, what, path, body, want, unkeyed string) {
	t.Helper()
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Idempotency-Key", "mine-1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("%s answered %d %s", what, rec.Code, rec.Body)
	}
	if f.count() != 3 {
		t.Fatalf("%d attempts, want 3", f.count())
	}
	for _, c := range f.calls {
		if k := requestKey(t, c.args); k != "mine-1" {
			t.Fatalf("an attempt carried key %q", k)
		}
	}
	// Without the header the agent's own key is on the request.
	rec = serve(h, "POST", path, unkeyed)
	if k := requestKey(t, f.last(t).args); rec.Code != 200 || !strings.HasPrefix(k, "stratus-") {
		t.Fatalf("answer %d, key %q", rec.Code, k)
	}
}
