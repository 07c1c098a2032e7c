package nova

import (
	"fmt"
	"testing"
)

// TestServiceForceDownAndDeleteAgainstARealServer: forcing a compute
// service down makes its host down for the scheduler and for evacuate
// (fencing); a service with instances, or up, cannot be deleted; an
// empty, forced-down one can, and leaves the aggregates.
func TestServiceForceDownAndDeleteAgainstARealServer(t *testing.T) {
	h, _ := newRealHarness(t, "hv-1", "hv-2")
	compute := func(host string) map[string]any {
		t.Helper()
		for _, s := range h.req("GET", "/compute/v2.1/os-services?binary=nova-compute&host="+host, adminTok, "2.53", nil).expect(t, 200).list("services") {
			return s.(map[string]any)
		}
		t.Fatalf("no compute service on %s", host)
		return nil
	}
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1", "availability_zone": "nova"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	s := h.req("GET", "/compute/v2.1/servers/"+id, adminTok, "", nil).expect(t, 200).obj("server")
	src := s["OS-EXT-SRV-ATTR:host"].(string)
	other := "hv-1"
	if src == "hv-1" {
		other = "hv-2"
	}
	svc := compute(src)
	h.req("DELETE", "/compute/v2.1/os-services/"+svc["id"].(string), adminTok, "2.53", nil).
		fault(t, 409, "conflictingRequest", "it is up")
	// Evacuate needs the host down: forcing it down fences it.
	act(h, id, adminTok, "2.29", `{"evacuate": {}}`).fault(t, 400, "badRequest", "is still in use")
	r = h.req("PUT", "/compute/v2.1/os-services/"+svc["id"].(string), adminTok, "2.53", map[string]any{"forced_down": true}).expect(t, 200)
	if got := r.obj("service"); got["forced_down"] != true || got["state"] != "down" {
		t.Fatalf("forced down: %v", got)
	}
	h.req("DELETE", "/compute/v2.1/os-services/"+svc["id"].(string), adminTok, "2.53", nil).
		fault(t, 409, "conflictingRequest", "hosting instances")
	act(h, id, adminTok, "2.29", `{"evacuate": {}}`).expect(t, 200)
	waitFor(t, "the server rebuilt on "+other, func() error {
		s := h.req("GET", "/compute/v2.1/servers/"+id, adminTok, "", nil).expect(t, 200).obj("server")
		if s["status"] != "ACTIVE" || s["OS-EXT-SRV-ATTR:host"] != other {
			return fmt.Errorf("%v on %v", s["status"], s["OS-EXT-SRV-ATTR:host"])
		}
		return nil
	})
	h.req("POST", "/compute/v2.1/os-aggregates", adminTok, "", map[string]any{"aggregate": map[string]any{"name": "rack1"}}).expect(t, 200)
	aggs := h.req("GET", "/compute/v2.1/os-aggregates", adminTok, "", nil).expect(t, 200).list("aggregates")
	aggID := aggs[0].(map[string]any)["id"]
	h.req("POST", fmt.Sprintf("/compute/v2.1/os-aggregates/%v/action", aggID), adminTok, "", map[string]any{"add_host": map[string]any{"host": src}}).expect(t, 200)
	// The evacuated source's allocation went with the evacuation.
	waitFor(t, "the source empty", func() error {
		r := h.req("DELETE", "/compute/v2.1/os-services/"+svc["id"].(string), adminTok, "2.53", nil)
		if r.status != 204 {
			return fmt.Errorf("delete: %d %s", r.status, r.raw)
		}
		return nil
	})
	if n := len(h.req("GET", "/compute/v2.1/os-services?binary=nova-compute", adminTok, "2.53", nil).expect(t, 200).list("services")); n != 1 {
		t.Fatalf("%d compute services after the delete", n)
	}
	agg := h.req("GET", fmt.Sprintf("/compute/v2.1/os-aggregates/%v", aggID), adminTok, "", nil).expect(t, 200).obj("aggregate")
	if hosts := agg["hosts"].([]any); len(hosts) != 0 {
		t.Fatalf("aggregate still lists %v", hosts)
	}
	h.req("DELETE", "/compute/v2.1/os-services/"+svc["id"].(string), adminTok, "2.53", nil).expect(t, 404)
}
