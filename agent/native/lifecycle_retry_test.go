package native

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestNativeActionRetriesAnElectionWithItsIdempotencyKey: an instance
// action whose answer was lost to an election is sent again with the
// same key (the client's, or one of the agent's), and a refusal is not.
func TestNativeActionRetriesAnElectionWithItsIdempotencyKey(t *testing.T) {
	t.Parallel()
	h, f := electionRoutes("Instance.Task", 2, "InstanceTask: no leader: raft apply: leadership lost while committing log", func(reply any) {
		if out, ok := reply.(*structs.InstanceTaskResponse); ok {
			out.RequestID = "req-1"
		}
	})
	checkKeyedRetries(t, h, f, "action", "/v1/instances/i1/actions", `{"Action":"stop"}`, "req-1", `{"Action":"start"}`)
	// A key that is not one is refused before any call.
	req := httptest.NewRequest("POST", "/v1/instances/i1/actions", strings.NewReader(`{"Action":"stop"}`))
	req.Header.Set("Idempotency-Key", strings.Repeat("k", 256))
	rec := httptest.NewRecorder()
	n := f.count()
	if h.ServeHTTP(rec, req); rec.Code != 400 || f.count() != n {
		t.Fatalf("a 256-character key answered %d after %d calls", rec.Code, f.count()-n)
	}
	// A refusal (the key used for another task) is not retried.
	h, f = retryRoutes(func(string, any, any) error {
		return structs.Errorf(structs.KindConflict, "Idempotency-Key %q was already used for a different request", "mine-1")
	})
	if rec := serve(h, "POST", "/v1/instances/i1/actions", `{"Action":"stop"}`); rec.Code != 409 || f.count() != 1 {
		t.Fatalf("conflict: %d after %d attempts", rec.Code, f.count())
	}
}

// TestNativeSnapshotRetriedWithItsKeyNamesTheFirstImage: a snapshot
// whose key started one before is answered with that one's image, and
// the image made for the retry is deleted.
func TestNativeSnapshotRetriedWithItsKeyNamesTheFirstImage(t *testing.T) {
	t.Parallel()
	var deleted []string
	h, _ := retryRoutes(func(method string, args, reply any) error {
		switch out := reply.(type) {
		case *structs.SingleInstanceResponse:
			out.Instance = &structs.Instance{ID: "i1", Name: "web"}
		case *structs.SingleImageResponse:
			out.Image = &structs.Image{ID: "img-retry"}
		case *structs.InstanceTaskResponse:
			out.RequestID, out.ImageID = "req-1", "img-first"
		case *structs.GenericResponse:
			deleted = append(deleted, args.(*structs.ImageDeleteRequest).ImageID)
		}
		return nil
	})
	rec := serve(h, "POST", "/v1/instances/i1/snapshot", `{"Name":"snap"}`)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"img-first"`) {
		t.Fatalf("snapshot answered %d %s", rec.Code, rec.Body)
	}
	if len(deleted) != 1 || deleted[0] != "img-retry" {
		t.Fatalf("deleted %q, want the retry's image", deleted)
	}
}

// agentTaskKey is the idempotency key the agent picked for the last
// Instance.Task call (one of its own, "stratus-…"), "" if none.
func agentTaskKey(t *testing.T, f *fakeRPC) string {
	t.Helper()
	if a, ok := f.last(t).args.(*structs.InstanceTaskRequest); ok && strings.HasPrefix(a.IdempotencyKey, "stratus-") {
		return a.IdempotencyKey
	}
	return ""
}
