package native

import (
	"net/http"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// maxReadyWait bounds ?wait on GET /v1/status/ready, as the blocking
// queries' wait is bounded.
const maxReadyWait = 5 * time.Minute

// readyResponse is the body of a ready agent's GET /v1/status/ready.
type readyResponse struct {
	Ready  bool   `json:"ready"`
	Leader string `json:"leader"`
}

// statusReady answers GET /v1/status/ready: 200 once the agent can serve
// a user (its own readiness, such as dev mode's seeding, and a known
// leader), else 503 saying what it waits for. ?wait=30s holds the answer
// until ready or the wait ends, so a script can wait for a fresh cloud
// with one call.
func (a *API) statusReady(w http.ResponseWriter, q *request) (any, error) {
	var wait time.Duration
	if v := q.URL.Query().Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, structs.Errorf(structs.KindInvalid, "invalid wait %q: a duration such as 30s", v)
		}
		wait = min(d, maxReadyWait)
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		leader, why := a.readiness(q)
		if why == "" {
			return readyResponse{Ready: true, Leader: leader}, nil
		}
		if wait == 0 {
			return nil, structs.Errorf(structs.KindUnavailable, "not ready: %s", why)
		}
		// Wake early when the seeding ends, but only while it has not:
		// a closed channel would turn the wait for a leader into a spin.
		var ready <-chan struct{}
		if a.cfg.Readiness != nil {
			select {
			case <-a.cfg.Readiness.Ready():
			default:
				ready = a.cfg.Readiness.Ready()
			}
		}
		poll := time.NewTimer(100 * time.Millisecond)
		select {
		case <-deadline.C:
			return nil, structs.Errorf(structs.KindUnavailable, "not ready: %s", why)
		case <-q.Context().Done():
			return nil, structs.Errorf(structs.KindUnavailable, "not ready: %s", why)
		case <-ready:
			// Seeded: look at the leader again at once.
		case <-poll.C:
		}
		poll.Stop()
	}
}

// readiness returns the leader and, while the agent is not ready, why.
func (a *API) readiness(q *request) (leader, why string) {
	if a.cfg.Readiness != nil {
		select {
		case <-a.cfg.Readiness.Ready():
		default:
			return "", a.cfg.Readiness.NotReady()
		}
	}
	var out structs.StatusResponse
	rpc := a.cfg.Self
	if rpc == nil {
		rpc = q.rpc
	}
	if err := rpc.RPC("Status.Leader", &structs.GenericRequest{QueryOptions: structs.QueryOptions{AllowStale: true}}, &out); err != nil {
		return "", "no leader: " + structs.Message(err)
	}
	if out.Leader == "" {
		return "", "no leader elected yet"
	}
	return out.Leader, ""
}
