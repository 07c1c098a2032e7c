package nova

import (
	"testing"
)

// TestServerDiagnostics checks GET /servers/{id}/diagnostics over a real
// server and a fake hypervisor: the 2.48 shape against Nova's sample,
// the older flat one, admin-only policy, 409 for a stopped server, 404
// for an unknown one and 501 without diagnostics.
func TestServerDiagnostics(t *testing.T) {
	h := newConsoleHarness(t)
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	path := "/compute/v2.1/servers/" + id + "/diagnostics"

	std := h.req("GET", path, adminTok, "2.48", nil).expect(t, 200)
	want := sample(t, "os-server-diagnostics/v2.48/server-diagnostics-get-resp.json")
	sameShape(t, "diagnostics 2.48", std.body, want)
	if std.body["driver"] != "libvirt" || std.body["state"] != "running" || std.body["num_cpus"].(float64) < 1 ||
		std.body["num_disks"].(float64) < 1 {
		t.Errorf("diagnostics %v", std.body)
	}
	if mem := std.obj("memory_details"); mem["maximum"].(float64) <= 0 {
		t.Errorf("memory_details %v", mem)
	}

	old := h.req("GET", path, adminTok, "2.47", nil).expect(t, 200)
	for _, k := range []string{"cpu0_time", "memory", "vda_read", "vda_read_req", "vda_write", "vda_write_req", "vda_errors"} {
		if _, ok := old.body[k]; !ok {
			t.Errorf("pre-2.48 diagnostics %v lack %s", keys(old.body), k)
		}
	}
	h.req("GET", path, adminTok, "", nil).expect(t, 200)

	h.req("GET", path, memberTok, "2.48", nil).fault(t, 403, "forbidden", diagnosticsRule)
	h.req("GET", "/compute/v2.1/servers/nope/diagnostics", adminTok, "2.48", nil).expect(t, 404)

	// Not running: Nova's InstanceInvalidState.
	act(h, id, memberTok, "", `{"os-stop": null}`).expect(t, 202)
	waitServer(h, id, "SHUTOFF")
	h.req("GET", path, adminTok, "2.48", nil).fault(t, 409, "conflictingRequest", "get_diagnostics")
	act(h, id, memberTok, "", `{"os-start": null}`).expect(t, 202)
	waitServer(h, id, "ACTIVE")
	h.req("GET", path, adminTok, "2.48", nil).expect(t, 200)

	// A console service without diagnostics (a driver without them
	// answers the same way): 501.
	h.api.SetConsoles(struct{ Consoles }{h.api.consoles})
	h.req("GET", path, adminTok, "2.48", nil).fault(t, 501, "notImplemented", "not supported")
}

// TestNovaDriverEnum: 2.48's driver is always in Nova's enum.
func TestNovaDriverEnum(t *testing.T) {
	for in, want := range map[string]string{"libvirt": "libvirt", "ironic": "ironic", "vmwareapi": "vmwareapi", "fake": "libvirt", "": "libvirt"} {
		if got := novaDriver(in); got != want {
			t.Errorf("novaDriver(%q) = %q, want %q", in, got, want)
		}
	}
}
