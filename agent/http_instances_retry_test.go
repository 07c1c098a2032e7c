package agent

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

// retryRoutes is bootRoutes with the production retry budget.
func retryRoutes(answer func(method string, args, reply any) error) (http.Handler, *fakeRPC) {
	f := &fakeRPC{answer: answer}
	off := false
	a := &Agent{config: &Config{ACL: &ACLConfig{Enabled: &off}}, logger: hclog.NewNullLogger(), rpc: f, writeRetry: time.Minute}
	a.metrics = newMetrics(a)
	return a.routes(), f
}

func TestNativeCreateRetriesAnElectionWithItsIdempotencyKey(t *testing.T) {
	t.Parallel()
	failures := 2
	h, f := retryRoutes(func(method string, args, reply any) error {
		if method == "Instance.Create" && failures > 0 {
			failures--
			return errors.New("InstanceCreate: no leader: raft apply: node is not the leader")
		}
		if out, ok := reply.(*structs.InstanceCreateResponse); ok {
			out.Instances = []*structs.Instance{{ID: "i1", Name: "web"}}
		}
		return nil
	})
	req := httptest.NewRequest("POST", "/v1/instances", strings.NewReader(`{"Name":"web","Flavor":"1"}`))
	req.Header.Set("Idempotency-Key", "mine-1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("create answered %d %s", rec.Code, rec.Body)
	}
	if f.count() != 3 {
		t.Fatalf("%d attempts, want 3", f.count())
	}
	for _, c := range f.calls {
		if k := c.args.(*structs.InstanceCreateRequest).IdempotencyKey; k != "mine-1" {
			t.Fatalf("an attempt carried key %q", k)
		}
	}
	// Without the header the agent's own key is on the request.
	rec = serve(h, "POST", "/v1/instances", `{"Name":"web","Flavor":"1"}`)
	if k := f.last(t).args.(*structs.InstanceCreateRequest).IdempotencyKey; rec.Code != 200 || !strings.HasPrefix(k, "stratus-") {
		t.Fatalf("answer %d, key %q", rec.Code, k)
	}
	// A refusal is not retried.
	failures = 0
	h, f = retryRoutes(func(method string, _, _ any) error {
		return structs.Errorf(structs.KindQuotaReached, "Quota exceeded for instances")
	})
	if rec := serve(h, "POST", "/v1/instances", `{"Name":"web","Flavor":"1"}`); rec.Code != 403 || f.count() != 1 {
		t.Fatalf("quota refusal: %d after %d attempts", rec.Code, f.count())
	}
}

func TestNativeDeleteWhoseAnswerWasLostSucceeds(t *testing.T) {
	t.Parallel()
	calls := 0
	h, _ := retryRoutes(func(method string, _, _ any) error {
		calls++
		if calls == 1 {
			return errors.New("InstanceDelete: no leader: raft apply: leadership lost while committing log")
		}
		return structs.Errorf(structs.KindNotFound, "Instance i1 could not be found.")
	})
	if rec := serve(h, "DELETE", "/v1/instances/i1", ""); rec.Code != 200 || calls != 2 {
		t.Fatalf("delete answered %d after %d calls", rec.Code, calls)
	}
}
