package nova

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/server"
)

// keyedAct posts a server action with an Idempotency-Key header.
func keyedAct(t *testing.T, srv *httptest.Server, id, key, version, body string) (int, map[string]any) {
	t.Helper()
	return keyedRequest(t, srv, "POST", "/compute/v2.1/servers/"+id+"/action", key, version, body)
}

// actionsOf counts an instance's actions by name.
func actionsOf(t *testing.T, s *server.Server, id string) map[string]int {
	t.Helper()
	acts, err := s.FSM().State().InstanceActions(nil, id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, a := range acts {
		out[a.Action]++
	}
	return out
}

// TestServerActionsRetriedWithTheirKeyRunOnce: a server action whose
// answer was lost to an election is retried by the agent with its key
// and answered, not refused as a conflict with itself; a client's own
// retry with its Idempotency-Key is answered the same way, even once the
// action is over; the key reused for another action is a 409.
func TestServerActionsRetriedWithTheirKeyRunOnce(t *testing.T) {
	h, s := newRealHarness(t, "hv-1")
	// Calls that fail take effect: their answers are lost, as when the
	// leader dies after committing.
	lossy := &flakyRPC{next: s, failing: map[string]int{}, through: true}
	srv := retryingAPI(t, lossy)

	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")

	// The agent's retry of a stop that committed, under its own key.
	lossy.failing["Instance.Task"] = 1
	if code, body := keyedAct(t, srv, id, "", "", `{"os-stop": null}`); code != http.StatusAccepted {
		t.Fatalf("stop answered %d %v", code, body)
	}
	if len(lossy.keys) != 2 || !strings.HasPrefix(lossy.keys[0], "stratus-") || lossy.keys[0] != lossy.keys[1] {
		t.Fatalf("attempts carried keys %q, want one key of the agent's", lossy.keys)
	}
	waitServer(h, id, "SHUTOFF")

	// A client's retry with its key, during the start and after it.
	for range 2 {
		if code, body := keyedAct(t, srv, id, "client-start-1", "", `{"os-start": null}`); code != http.StatusAccepted {
			t.Fatalf("start answered %d %v", code, body)
		}
	}
	waitServer(h, id, "ACTIVE")
	if code, body := keyedAct(t, srv, id, "client-start-1", "", `{"os-start": null}`); code != http.StatusAccepted {
		t.Fatalf("start retried once ACTIVE answered %d %v", code, body)
	}
	if n := actionsOf(t, s, id); n["stop"] != 1 || n["start"] != 1 {
		t.Fatalf("actions %v, want one stop and one start", n)
	}
	// The key of the start for another action is refused.
	code, body := keyedAct(t, srv, id, "client-start-1", "", `{"os-stop": null}`)
	if fault, _ := body["conflictingRequest"].(map[string]any); code != http.StatusConflict || fault == nil ||
		!strings.Contains(fault["message"].(string), "Idempotency-Key") {
		t.Fatalf("a reused key answered %d %v", code, body)
	}
	if code, body := keyedAct(t, srv, id, strings.Repeat("k", 256), "", `{"os-stop": null}`); code != http.StatusBadRequest {
		t.Fatalf("a 256-character key answered %d %v", code, body)
	}

	// A snapshot retried with its key names the first one's image; the
	// image made for the retry is deleted again.
	var first string
	for range 2 {
		code, body := keyedAct(t, srv, id, "snap-1", "2.45", `{"createImage": {"name": "snap"}}`)
		if code != http.StatusAccepted {
			t.Fatalf("createImage answered %d %v", code, body)
		}
		img, _ := body["image_id"].(string)
		if first == "" {
			first = img
		}
		if img == "" || img != first {
			t.Fatalf("createImage answered image %q, want the first %q", img, first)
		}
	}
	if len(lossy.deleted) != 1 || lossy.deleted[0] == first {
		t.Fatalf("images deleted: %q, want the retry's only (not %s)", lossy.deleted, first)
	}
	if n := actionsOf(t, s, id); n["createImage"] != 1 {
		t.Fatalf("actions %v, want one createImage", n)
	}
}
