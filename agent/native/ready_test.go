package native

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// readiness is a Readiness whose channel the test closes.
type readiness struct {
	ch  chan struct{}
	why string
}

func (r *readiness) Ready() <-chan struct{} { return r.ch }
func (r *readiness) NotReady() string       { return r.why }

// TestStatusReady: not ready while the daemon's readiness is pending or
// no leader is known, saying which; a wait after the seeding is done
// polls for the leader rather than spinning on the closed channel.
func TestStatusReady(t *testing.T) {
	leader := ""
	f := &fakeRPC{answer: func(method string, args, reply any) error {
		reply.(*structs.StatusResponse).Leader = leader
		return nil
	}}
	r := &readiness{ch: make(chan struct{}), why: "dev mode is still seeding flavors"}
	h := New(Config{RPC: f, Readiness: r, Logger: hclog.NewNullLogger()}).Handler()

	rec := serve(h, "GET", "/v1/status/ready", "")
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "still seeding flavors") {
		t.Fatalf("pending: %d %s", rec.Code, rec.Body)
	}
	if f.count() != 0 {
		t.Errorf("asked for the leader before the seeding was done")
	}
	close(r.ch)
	rec = serve(h, "GET", "/v1/status/ready?wait=300ms", "")
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "no leader") {
		t.Fatalf("no leader: %d %s", rec.Code, rec.Body)
	}
	if n := f.count(); n < 2 || n > 6 {
		t.Errorf("%d leader lookups in a 300 ms wait: want a poll every 100 ms, not a spin", n)
	}
	leader = "127.0.0.1:8776"
	rec = serve(h, "GET", "/v1/status/ready", "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"leader": "127.0.0.1:8776"`) {
		t.Fatalf("ready: %d %s", rec.Code, rec.Body)
	}
	if rec = serve(h, "GET", "/v1/status/ready?wait=-1s", ""); rec.Code != http.StatusBadRequest {
		t.Errorf("negative wait: %d", rec.Code)
	}
}
