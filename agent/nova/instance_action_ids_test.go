package nova

import (
	"fmt"
	"testing"
)

// TestInstanceActionFoundByResponseRequestID: every call that records an
// instance action answers with the request ID the action carries, in
// both x-openstack-request-id and x-compute-request-id, and
// GET /servers/{id}/os-instance-actions/{request_id} finds it by that ID.
func TestInstanceActionFoundByResponseRequestID(t *testing.T) {
	h, s := newRealHarness(t, "hv-1", "hv-2")
	private := makePrivate(t, s, publicNetwork(t, s))
	type call struct {
		action string
		resp   *response
	}
	var calls []call
	record := func(action string, r *response) {
		t.Helper()
		if r.status >= 300 {
			t.Fatalf("%s: %d %s", action, r.status, r.raw)
		}
		calls = append(calls, call{action, r})
	}
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "acts", "imageRef": "cirros", "flavorRef": "1"}})
	record("create", r)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	for _, step := range []struct{ action, body, token, status string }{
		{"stop", `{"os-stop": null}`, memberTok, "SHUTOFF"},
		{"start", `{"os-start": null}`, memberTok, "ACTIVE"},
		{"reboot", `{"reboot": {"type": "SOFT"}}`, memberTok, "ACTIVE"},
		{"pause", `{"pause": null}`, memberTok, "PAUSED"},
		{"unpause", `{"unpause": null}`, memberTok, "ACTIVE"},
		{"suspend", `{"suspend": null}`, memberTok, "SUSPENDED"},
		{"resume", `{"resume": null}`, memberTok, "ACTIVE"},
		{"lock", `{"lock": null}`, memberTok, "ACTIVE"},
		{"unlock", `{"unlock": null}`, memberTok, "ACTIVE"},
		{"rescue", `{"rescue": null}`, memberTok, "RESCUE"},
		{"unrescue", `{"unrescue": null}`, memberTok, "ACTIVE"},
		{"resize", `{"resize": {"flavorRef": "2"}}`, memberTok, "VERIFY_RESIZE"},
		{"confirmResize", `{"confirmResize": null}`, memberTok, "ACTIVE"},
		{"resize", `{"resize": {"flavorRef": "3"}}`, memberTok, "VERIFY_RESIZE"},
		{"revertResize", `{"revertResize": null}`, memberTok, "ACTIVE"},
		{"migrate", `{"migrate": null}`, adminTok, "VERIFY_RESIZE"},
		{"confirmResize", `{"confirmResize": null}`, adminTok, "ACTIVE"},
		{"live-migration", `{"os-migrateLive": {"host": null, "block_migration": "auto"}}`, adminTok, "ACTIVE"},
		{"rebuild", `{"rebuild": {"imageRef": "cirros"}}`, memberTok, "ACTIVE"},
		{"createImage", `{"createImage": {"name": "snap"}}`, memberTok, "ACTIVE"},
		{"shelve", `{"shelve": null}`, memberTok, "SHELVED_OFFLOADED"},
		{"unshelve", `{"unshelve": null}`, memberTok, "ACTIVE"},
	} {
		record(step.action, act(h, id, step.token, "2.25", step.body))
		waitServer(h, id, step.status)
	}
	r = h.req("POST", "/compute/v2.1/servers/"+id+"/os-interface", memberTok, "",
		map[string]any{"interfaceAttachment": map[string]any{"net_id": private.ID}})
	record("attach_interface", r)
	port := r.obj("interfaceAttachment")["port_id"].(string)
	record("detach_interface", h.req("DELETE", "/compute/v2.1/servers/"+id+"/os-interface/"+port, memberTok, "", nil))
	record("delete", h.req("DELETE", "/compute/v2.1/servers/"+id, memberTok, "", nil))
	waitServer(h, id, "SOFT_DELETED")
	record("restore", act(h, id, memberTok, "", `{"restore": null}`))
	waitServer(h, id, "ACTIVE")
	base := "/compute/v2.1/servers/" + id + "/os-instance-actions"
	listed := map[string]string{}
	for _, a := range h.req("GET", base, memberTok, "2.21", nil).expect(t, 200).list("instanceActions") {
		m := a.(map[string]any)
		listed[m["request_id"].(string)] = m["action"].(string)
	}
	for _, c := range calls {
		rid := c.resp.header.Get("X-Openstack-Request-Id")
		if rid == "" || c.resp.header.Get("X-Compute-Request-Id") != rid {
			t.Errorf("%s: request ids %q and %q", c.action, rid, c.resp.header.Get("X-Compute-Request-Id"))
			continue
		}
		if listed[rid] != c.action {
			t.Errorf("%s: the action of request %s is %q; actions %v", c.action, rid, listed[rid], listed)
			continue
		}
		show := h.req("GET", base+"/"+rid, memberTok, "2.21", nil)
		if show.status != 200 {
			t.Errorf("%s: show %s: %d %s", c.action, rid, show.status, show.raw)
			continue
		}
		if got := show.obj("instanceAction"); got["action"] != c.action || got["request_id"] != rid {
			t.Errorf("%s: show %s: %v", c.action, rid, got)
		}
	}
	if len(calls) != len(listed) {
		t.Errorf("%d calls, %d actions: %v", len(calls), len(listed), fmt.Sprint(listed))
	}
}
