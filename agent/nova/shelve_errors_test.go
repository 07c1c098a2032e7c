package nova

import (
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/server"
)

// TestShelveConflictsAsNova: acting on a server in the wrong shelve
// state is Nova's 409 InstanceInvalidState, naming the vm_state or
// task_state, never a 404; calls needing a host on an offloaded server
// are InstanceNotReady 409s.
func TestShelveConflictsAsNova(t *testing.T) {
	h, _ := newRealHarnessWith(t, func(c *server.Config) { c.ShelvedOffloadTime = time.Hour }, "hv-1")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "shv", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	cannot := func(action, attr, state string) string {
		return "Cannot '" + action + "' instance " + id + " while it is in " + attr + " " + state
	}
	act(h, id, memberTok, "", `{"unshelve": null}`).fault(t, 409, "conflictingRequest", cannot("unshelve", "vm_state", "active"))
	act(h, id, adminTok, "", `{"shelveOffload": null}`).fault(t, 409, "conflictingRequest", cannot("shelveOffload", "vm_state", "active"))
	act(h, id, memberTok, "", `{"shelve": null}`).expect(t, 202)
	if r := act(h, id, memberTok, "", `{"shelve": null}`); r.status != 409 {
		t.Fatalf("shelve while shelving: %d %s", r.status, r.raw)
	}
	waitServer(h, id, "SHELVED")
	act(h, id, memberTok, "", `{"shelve": null}`).fault(t, 409, "conflictingRequest", cannot("shelve", "vm_state", "shelved"))
	act(h, id, memberTok, "", `{"os-start": null}`).fault(t, 409, "conflictingRequest", cannot("start", "vm_state", "shelved"))
	act(h, id, adminTok, "", `{"shelveOffload": null}`).expect(t, 202)
	waitServer(h, id, "SHELVED_OFFLOADED")
	act(h, id, memberTok, "", `{"shelve": null}`).fault(t, 409, "conflictingRequest", cannot("shelve", "vm_state", "shelved_offloaded"))
	act(h, id, adminTok, "", `{"shelveOffload": null}`).fault(t, 409, "conflictingRequest", cannot("shelveOffload", "vm_state", "shelved_offloaded"))
	act(h, id, memberTok, "", `{"reboot": {"type": "HARD"}}`).fault(t, 409, "conflictingRequest", cannot("reboot", "vm_state", "shelved_offloaded"))
	h.req("GET", "/compute/v2.1/servers/"+id+"/diagnostics", adminTok, "2.48", nil).fault(t, 409, "conflictingRequest", "Instance "+id+" is not ready")
	act(h, id, memberTok, "", `{"unshelve": null}`).expect(t, 202)
	waitServer(h, id, "ACTIVE")
}
