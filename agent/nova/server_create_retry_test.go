package nova

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// electionAPI serves the Compute API over fake servers during an
// election (flakyRPC).
func electionAPI(t *testing.T, failing map[string]int, through bool) (*httptest.Server, *flakyRPC) {
	t.Helper()
	rpc := &flakyRPC{next: newFakeRPC(), failing: failing, through: through}
	return retryingAPI(t, rpc), rpc
}

// send sends a Compute API request at microversion 2.37.
func send(t *testing.T, srv *httptest.Server, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	return keyedRequest(t, srv, method, path, key, "2.37", body)
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
