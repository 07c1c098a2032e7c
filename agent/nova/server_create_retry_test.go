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

// electionRPC is the fake servers during an election: the first calls
// of a method fail as a leader change fails them. With through set, a
// failing call still takes effect (the entry committed, the answer was
// lost). It records each Instance.Create's idempotency key.
type electionRPC struct {
	*fakeRPC
	mu      sync.Mutex
	failing map[string]int
	through bool
	keys    []string
}

var errLeadershipLost = errors.New("InstanceCreate: no leader: raft apply: leadership lost while committing log")

func (e *electionRPC) RPC(method string, args, reply any) error {
	e.mu.Lock()
	if c, ok := args.(*structs.InstanceCreateRequest); ok {
		e.keys = append(e.keys, c.IdempotencyKey)
	}
	fail := e.failing[method] > 0
	if fail {
		e.failing[method]--
	}
	e.mu.Unlock()
	if !fail {
		return e.fakeRPC.RPC(method, args, reply)
	}
	if e.through {
		_ = e.fakeRPC.RPC(method, args, reply)
	}
	return errLeadershipLost
}

func electionAPI(t *testing.T, failing map[string]int, through bool) (*httptest.Server, *electionRPC) {
	t.Helper()
	rpc := &electionRPC{fakeRPC: newFakeRPC(), failing: failing, through: through}
	api := New(Config{RPC: rpc, Verifier: testTokens(), WriteRetry: 60 * time.Second})
	mux := http.NewServeMux()
	mux.Handle(MountPath+"/", api.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, rpc
}

func send(t *testing.T, srv *httptest.Server, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	r, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("X-Auth-Token", memberTok)
	r.Header.Set("OpenStack-API-Version", "compute 2.37")
	r.Header.Set("Content-Type", "application/json")
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

const bootBody = `{"server": {"name": "web", "flavorRef": "1", "imageRef": "img", "networks": "none"}}`

func TestBootRetriesAcrossAnElectionWithOneKey(t *testing.T) {
	srv, rpc := electionAPI(t, map[string]int{"Instance.Create": 2}, false)
	if code, body := send(t, srv, "POST", "/compute/v2.1/servers", "client-key-1", bootBody); code != http.StatusAccepted {
		t.Fatalf("boot answered %d %v", code, body)
	}
	if len(rpc.keys) != 3 || rpc.keys[0] != "client-key-1" || rpc.keys[2] != "client-key-1" {
		t.Fatalf("attempts carried keys %q, want the client's on all three", rpc.keys)
	}
	// Without a header the agent picks a key and keeps it.
	rpc.keys, rpc.failing["Instance.Create"] = nil, 1
	if code, body := send(t, srv, "POST", "/compute/v2.1/servers", "", bootBody); code != http.StatusAccepted {
		t.Fatalf("boot answered %d %v", code, body)
	}
	if len(rpc.keys) != 2 || rpc.keys[0] == "" || rpc.keys[0] != rpc.keys[1] {
		t.Fatalf("attempts carried keys %q, want one key of the agent's", rpc.keys)
	}
	// A key that is not one is Nova's 400.
	code, body := send(t, srv, "POST", "/compute/v2.1/servers", strings.Repeat("k", 256), bootBody)
	if fault, _ := body["badRequest"].(map[string]any); code != http.StatusBadRequest || fault == nil {
		t.Fatalf("a 256-character key answered %d %v", code, body)
	}
}

func TestDeleteWhoseAnswerWasLostIsDone(t *testing.T) {
	srv, rpc := electionAPI(t, map[string]int{}, true)
	code, body := send(t, srv, "POST", "/compute/v2.1/servers", "", bootBody)
	if code != http.StatusAccepted {
		t.Fatalf("boot answered %d %v", code, body)
	}
	id, _ := body["server"].(map[string]any)["id"].(string)
	// The first delete goes through but its answer is lost; the retry
	// finds nothing to delete, which means the first one did it.
	rpc.failing["Instance.Delete"] = 1
	if code, body := send(t, srv, "DELETE", "/compute/v2.1/servers/"+id, "", ""); code != http.StatusNoContent {
		t.Fatalf("delete answered %d %v", code, body)
	}
	// A delete of what never existed is still a 404.
	if code, _ := send(t, srv, "DELETE", "/compute/v2.1/servers/"+id, "", ""); code != http.StatusNotFound {
		t.Fatalf("second delete answered %d", code)
	}
}
