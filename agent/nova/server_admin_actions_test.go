package nova

import (
	"testing"
)

// TestResetStateAgainstARealServer: an admin forces ERROR and back to
// ACTIVE on a real server; a member is refused and a bad state is a 400.
func TestResetStateAgainstARealServer(t *testing.T) {
	h, _ := newRealHarness(t, "hv-1")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")

	act(h, id, memberTok, "", `{"os-resetState": {"state": "error"}}`).fault(t, 403, "forbidden", "os_compute_api:os-admin-actions:reset_state")
	act(h, id, adminTok, "", `{"os-resetState": {"state": "paused"}}`).fault(t, 400, "badRequest", "")
	act(h, id, adminTok, "", `{"os-resetState": {}}`).fault(t, 400, "badRequest", "")
	act(h, id, adminTok, "", `{"os-resetState": {"state": "error", "extra": 1}}`).fault(t, 400, "badRequest", "")

	if r := act(h, id, adminTok, "", `{"os-resetState": {"state": "error"}}`).expect(t, 202); len(r.raw) != 0 {
		t.Fatalf("reset answered a body: %s", r.raw)
	}
	waitServer(h, id, "ERROR")
	// An instance in ERROR only allows what Nova allows from error:
	// pausing is refused, and reset-state brings it back.
	act(h, id, memberTok, "", `{"pause": null}`).fault(t, 409, "conflictingRequest", "")
	act(h, id, adminTok, "", `{"os-resetState": {"state": "active"}}`).expect(t, 202)
	waitServer(h, id, "ACTIVE")
	act(h, id, memberTok, "", `{"pause": null}`).expect(t, 202)
	waitServer(h, id, "PAUSED")
}
