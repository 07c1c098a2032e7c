package nova

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"
)

// events posts a batch of external events as the admin.
func postEvents(h *harness, version string, events ...map[string]any) *response {
	h.t.Helper()
	return h.req("POST", "/compute/v2.1/os-server-external-events", adminTok, version, map[string]any{"events": events})
}

// eventCodes is each answered event's code and status.
func eventCodes(r *response) []string {
	var out []string
	for _, e := range r.list("events") {
		ev := e.(map[string]any)
		out = append(out, fmt.Sprintf("%v %v", ev["code"], ev["status"]))
	}
	return out
}

// actionNamed waits for the server's instance action of a request.
func actionNamed(h *harness, id, requestID, want string) {
	h.t.Helper()
	waitFor(h.t, want+" action", func() error {
		r := h.req("GET", "/compute/v2.1/servers/"+id+"/os-instance-actions/"+requestID, adminTok, "2.51", nil)
		if r.status != http.StatusOK {
			return fmt.Errorf("%d %s", r.status, r.raw)
		}
		if got := r.obj("instanceAction")["action"]; got != want {
			return fmt.Errorf("action %v", got)
		}
		return nil
	})
}

func TestServerExternalEventsAgainstARealServer(t *testing.T) {
	h, _ := newRealHarness(t, "hv-1")
	boot := func(name string) string {
		r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
			"name": name, "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
		return r.obj("server")["id"].(string)
	}
	id, offloaded := boot("events"), boot("offloaded")
	waitServer(h, id, "ACTIVE")
	waitServer(h, offloaded, "ACTIVE")
	act(h, offloaded, memberTok, "", `{"shelve": null}`).expect(t, 202)
	// Shelving offloads at once here (as Nova's shelved_offload_time 0).
	waitServer(h, offloaded, "SHELVED_OFFLOADED")
	const unknown = "3df201cf-2451-44f2-8d25-a4ca826fc1f3"

	// Nova's sample: one event on a server with a host.
	r := postEvents(h, "", map[string]any{"name": "network-changed", "tag": "foo", "server_uuid": id}).expect(t, 200)
	want := sample(t, "os-server-external-events/event-create-resp.json")
	want["events"].([]any)[0].(map[string]any)["server_uuid"] = id
	if !reflect.DeepEqual(r.body, want) {
		t.Fatalf("answer %s", r.raw)
	}

	// Mixed results: 207, each event with its code; a status asked for
	// comes back as the outcome.
	r = postEvents(h, "2.51",
		map[string]any{"name": "network-vif-plugged", "server_uuid": id, "status": "failed"},
		map[string]any{"name": "network-vif-unplugged", "server_uuid": unknown},
		map[string]any{"name": "volume-extended", "server_uuid": id},
		map[string]any{"name": "network-vif-deleted", "server_uuid": offloaded, "tag": "port"},
	).expect(t, 207)
	if got := eventCodes(r); !reflect.DeepEqual(got, []string{"200 completed", "404 failed", "400 failed", "422 failed"}) {
		t.Fatalf("codes %v: %s", got, r.raw)
	}
	if ev := r.list("events")[3].(map[string]any); ev["tag"] != "port" || ev["name"] != "network-vif-deleted" || ev["server_uuid"] != offloaded {
		t.Fatalf("event echoed as %v", ev)
	}
	// None accepted is still a 207 (Nova's fix of bug 1855752).
	r = postEvents(h, "", map[string]any{"name": "network-changed", "server_uuid": unknown}).expect(t, 207)
	if got := eventCodes(r); !reflect.DeepEqual(got, []string{"404 failed"}) {
		t.Fatalf("codes %v", got)
	}

	// volume-extended records Nova's extend_volume action; no volume is
	// attached, so nothing else happens.
	r = postEvents(h, "2.51", map[string]any{"name": "volume-extended", "server_uuid": id, "tag": unknown}).expect(t, 200)
	actionNamed(h, id, r.header.Get("X-Openstack-Request-Id"), "extend_volume")

	// power-update syncs the power state: POWER_OFF of a running server
	// stops it, POWER_ON starts it, each recorded as Nova's action.
	r = postEvents(h, "2.76", map[string]any{"name": "power-update", "server_uuid": id, "tag": "POWER_OFF"}).expect(t, 200)
	waitServer(h, id, "SHUTOFF")
	actionNamed(h, id, r.header.Get("X-Openstack-Request-Id"), "stop")
	// Already off: a no-op, still accepted and recorded as Nova does.
	r = postEvents(h, "2.76", map[string]any{"name": "power-update", "server_uuid": id, "tag": "POWER_OFF"}).expect(t, 200)
	actionNamed(h, id, r.header.Get("X-Openstack-Request-Id"), "stop")
	ev := h.req("GET", "/compute/v2.1/servers/"+id+"/os-instance-actions/"+r.header.Get("X-Openstack-Request-Id"), adminTok, "2.51", nil).
		obj("instanceAction")["events"].([]any)
	if len(ev) != 1 || ev[0].(map[string]any)["event"] != "compute_power_update" || ev[0].(map[string]any)["result"] != "Success" {
		t.Fatalf("no-op power-update events %v", ev)
	}
	postEvents(h, "2.76", map[string]any{"name": "power-update", "server_uuid": id, "tag": "POWER_SOMETHING"}).expect(t, 200)
	r = postEvents(h, "2.93", map[string]any{"name": "power-update", "server_uuid": id, "tag": "POWER_ON"}).expect(t, 200)
	waitServer(h, id, "ACTIVE")
	actionNamed(h, id, r.header.Get("X-Openstack-Request-Id"), "start")
	postEvents(h, "2.93", map[string]any{"name": "volume-reimaged", "server_uuid": id},
		map[string]any{"name": "accelerator-request-bound", "server_uuid": id, "tag": "arq"}).expect(t, 200)

	// Names are gated by microversion; bodies are validated first.
	for _, c := range []struct {
		version string
		body    any
		msg     string
	}{
		{"2.50", map[string]any{"events": []any{map[string]any{"name": "volume-extended", "server_uuid": id, "tag": "v"}}}, "field/attribute name. Value: volume-extended"},
		{"2.75", map[string]any{"events": []any{map[string]any{"name": "power-update", "server_uuid": id, "tag": "POWER_ON"}}}, "is not one of"},
		{"2.81", map[string]any{"events": []any{map[string]any{"name": "accelerator-request-bound", "server_uuid": id, "tag": "a"}}}, "is not one of"},
		{"2.92", map[string]any{"events": []any{map[string]any{"name": "volume-reimaged", "server_uuid": id}}}, "is not one of"},
		{"", map[string]any{"events": []any{}}, "events"},
		{"", map[string]any{}, "'events' is a required property"},
		{"", map[string]any{"events": []any{map[string]any{"name": "network-changed"}}}, "'server_uuid' is a required property"},
		{"", map[string]any{"events": []any{map[string]any{"name": "network-changed", "server_uuid": "nope"}}}, "server_uuid"},
		{"", map[string]any{"events": []any{map[string]any{"name": "network-changed", "server_uuid": id, "status": "done"}}}, "status"},
		{"", map[string]any{"events": []any{map[string]any{"name": "network-changed", "server_uuid": id, "extra": 1}}}, "Additional properties are not allowed"},
		{"", map[string]any{"events": []any{map[string]any{"name": "test-event", "server_uuid": id}}}, "is not one of"},
	} {
		h.req("POST", "/compute/v2.1/os-server-external-events", adminTok, c.version, c.body).fault(t, 400, "badRequest", c.msg)
	}
	h.req("POST", "/compute/v2.1/os-server-external-events", memberTok, "", map[string]any{"events": []any{
		map[string]any{"name": "network-changed", "server_uuid": id}}}).
		fault(t, 403, "forbidden", "os_compute_api:os-server-external-events:create")
	h.req("GET", "/compute/v2.1/os-server-external-events", adminTok, "", nil).expect(t, 405)
}
