package nova

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// The scaffolding the tests of keyed writes retried across elections
// (boots and server actions) share.

// errLeadershipLost is how a call fails while the servers elect a leader.
var errLeadershipLost = errors.New("InstanceCreate: no leader: raft apply: leadership lost while committing log")

// flakyRPC passes calls to next while an election goes on: the next
// failing[method] calls of a method fail as a leader change fails them.
// With through set, such a call still takes effect (the entry committed,
// the answer was lost). It records the idempotency key of every
// Instance.Create and Instance.Task, and the images Image.Delete was
// asked to delete.
type flakyRPC struct {
	next    RPC
	mu      sync.Mutex
	failing map[string]int
	through bool
	keys    []string
	deleted []string
}

func (f *flakyRPC) RPC(method string, args, reply any) error {
	f.mu.Lock()
	switch a := args.(type) {
	case *structs.InstanceCreateRequest:
		f.keys = append(f.keys, a.IdempotencyKey)
	case *structs.InstanceTaskRequest:
		f.keys = append(f.keys, a.IdempotencyKey)
	case *structs.ImageDeleteRequest:
		f.deleted = append(f.deleted, a.ImageID)
	}
	fail := f.failing[method] > 0
	if fail {
		f.failing[method]--
	}
	f.mu.Unlock()
	if !fail {
		return f.next.RPC(method, args, reply)
	}
	if f.through {
		if err := f.next.RPC(method, args, reply); err != nil {
			return err
		}
	}
	return errLeadershipLost
}

// retryingAPI serves the Compute API over rpc, retrying writes across
// elections for up to 60 s as the agent does.
func retryingAPI(t *testing.T, rpc RPC) *httptest.Server {
	t.Helper()
	api := New(Config{RPC: rpc, Verifier: testTokens(), WriteRetry: 60 * time.Second})
	mux := http.NewServeMux()
	mux.Handle(MountPath+"/", api.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// keyedRequest sends a Compute API request as a member, at microversion
// version ("" for the default), with an Idempotency-Key header when key
// is set; it returns the status and the decoded body.
func keyedRequest(t *testing.T, srv *httptest.Server, method, path, key, version, body string) (int, map[string]any) {
	t.Helper()
	r, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("X-Auth-Token", memberTok)
	r.Header.Set("Content-Type", "application/json")
	if version != "" {
		r.Header.Set("OpenStack-API-Version", "compute "+version)
	}
	if key != "" {
		r.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}
