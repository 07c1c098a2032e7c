package nova

import (
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestHostsListFiltersByZoneAndDropsDisabledHosts(t *testing.T) {
	h := newHarness(t)
	host, _, _ := addHostAndServers(h)
	h.rpc.addHost(&structs.Host{ID: "7b2d6c1f-4f30-4b9f-8c64-1a7f2e3d4c5b", Name: "compute-2", AZ: "az2", Status: structs.HostStatusUp, Enabled: true})
	h.rpc.addHost(&structs.Host{ID: "8c3e7d20-5a41-4cae-9d75-2b803f4e5d6c", Name: "compute-off", Status: structs.HostStatusUp})

	r := h.req("GET", "/compute/v2.1/os-hosts", adminTok, "", nil).expect(t, 200)
	sameShape(t, "hosts", r.body, sample(t, "os-hosts/hosts-list-resp.json"))
	var got [][3]any
	for _, raw := range r.list("hosts") {
		v := raw.(map[string]any)
		got = append(got, [3]any{v["host_name"], v["service"], v["zone"]})
	}
	want := [][3]any{
		{"server-1", "scheduler", "internal"}, {"server-1", "conductor", "internal"},
		{"server-2", "scheduler", "internal"}, {"server-2", "conductor", "internal"},
		{"compute-1", "compute", "az1"}, {"compute-2", "compute", "az2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("hosts\n got %v\nwant %v", got, want)
	}
	for zone, n := range map[string]int{"az1": 1, "internal": 4, "nowhere": 0, "": 6} {
		r := h.req("GET", "/compute/v2.1/os-hosts?zone="+zone, adminTok, "2.42", nil).expect(t, 200)
		if l := r.list("hosts"); len(l) != n {
			t.Fatalf("zone %q: %v", zone, l)
		}
	}
	// The last of repeated values counts, and other parameters are ignored.
	l := h.req("GET", "/compute/v2.1/os-hosts?zone=az2&zone=az1&foo=bar", adminTok, "", nil).expect(t, 200).list("hosts")
	if len(l) != 1 || l[0].(map[string]any)["host_name"] != host.Name {
		t.Fatalf("zone az1: %v", l)
	}

	h.req("GET", "/compute/v2.1/os-hosts", memberTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-hosts:list")
	h.req("GET", "/compute/v2.1/os-hosts", adminTok, "2.43", nil).fault(t, 404, "itemNotFound", msgNotFound)
	h.req("GET", "/compute/v2.1/os-hosts/compute-1", adminTok, "2.43", nil).fault(t, 404, "itemNotFound", msgNotFound)
}

func TestHostShowHasTotalsAndPerProjectRows(t *testing.T) {
	h := newHarness(t)
	host, _, _ := addHostAndServers(h)
	small := h.rpc.flavors["2"].Copy()
	h.rpc.addInstance(&structs.Instance{Name: "b", ProjectID: "p-other", FlavorID: small.ID, Flavor: small, HostID: host.ID, VMState: structs.VMStateActive})
	h.rpc.addInstance(&structs.Instance{Name: "c", ProjectID: "p-demo", FlavorID: small.ID, Flavor: small, HostID: host.ID, VMState: structs.VMStateStopped})

	r := h.req("GET", "/compute/v2.1/os-hosts/compute-1", adminTok, "", nil).expect(t, 200)
	sameShape(t, "host", r.body, sample(t, "os-hosts/host-get-resp.json"))
	tiny := h.rpc.flavors["1"]
	disk := func(f *structs.Flavor) float64 { return float64(f.RootGB + f.EphemeralGB) }
	want := [][5]any{
		{"(total)", 8.0, 16384.0, 100.0},
		{"(used_now)", 1.0, 1024.0, 1.0}, // memory includes the 512 MB reserved
		{"(used_max)", float64(tiny.VCPUs + 2*small.VCPUs), float64(tiny.MemoryMB + 2*small.MemoryMB), disk(tiny) + 2*disk(small)},
		{"p-demo", float64(tiny.VCPUs + small.VCPUs), float64(tiny.MemoryMB + small.MemoryMB), disk(tiny) + disk(small)},
		{"p-other", float64(small.VCPUs), float64(small.MemoryMB), disk(small)},
	}
	rows := r.list("host")
	if len(rows) != len(want) {
		t.Fatalf("rows %s", r.raw)
	}
	for i, raw := range rows {
		res := raw.(map[string]any)["resource"].(map[string]any)
		got := [5]any{res["project"], res["cpu"], res["memory_mb"], res["disk_gb"]}
		if got != want[i] || res["host"] != "compute-1" {
			t.Fatalf("row %d: %v, want %v", i, res, want[i])
		}
	}
	h.req("GET", "/compute/v2.1/os-hosts/nope", adminTok, "", nil).fault(t, 404, "itemNotFound", "Host 'nope' is not mapped to any cell")
	// Control-plane servers have no cell mapping in Nova either.
	h.req("GET", "/compute/v2.1/os-hosts/server-1", adminTok, "", nil).fault(t, 404, "itemNotFound", "not mapped to any cell")
	h.req("GET", "/compute/v2.1/os-hosts/compute-1", readerTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-hosts:show")
}

func TestHostUpdateAndPowerActionsAnswerAsNova(t *testing.T) {
	h := newHarness(t)
	host, _, _ := addHostAndServers(h)
	path := "/compute/v2.1/os-hosts/compute-1"

	r := h.req("PUT", path, adminTok, "", map[string]any{"status": "Disable"}).expect(t, 200)
	if want := map[string]any{"host": "compute-1", "status": "disabled"}; !reflect.DeepEqual(r.body, want) {
		t.Fatalf("update: %v", r.body)
	}
	if h.rpc.hosts[host.ID].Enabled {
		t.Fatal("host still enabled")
	}
	// A disabled host leaves the list, as a disabled service in Nova.
	for _, raw := range h.req("GET", "/compute/v2.1/os-hosts", adminTok, "", nil).expect(t, 200).list("hosts") {
		if raw.(map[string]any)["host_name"] == "compute-1" {
			t.Fatal("disabled host listed")
		}
	}
	r = h.req("PUT", path, adminTok, "", map[string]any{"status": "ENABLE"}).expect(t, 200)
	if r.body["status"] != "enabled" || !h.rpc.hosts[host.ID].Enabled {
		t.Fatalf("enable: %v", r.body)
	}

	// No driver has a maintenance mode: 501 after the status change.
	h.req("PUT", path, adminTok, "", map[string]any{"status": "disable", "maintenance_mode": "enable"}).
		fault(t, 501, "notImplemented", msgNotSupported)
	if h.rpc.hosts[host.ID].Enabled {
		t.Fatal("status not applied before the maintenance mode")
	}
	h.req("PUT", path, adminTok, "", map[string]any{"maintenance_mode": "disable"}).fault(t, 501, "notImplemented", msgNotSupported)

	for _, tc := range []struct {
		body any
		msg  string
	}{
		{map[string]any{}, "{} is not valid under any of the given schemas"},
		{map[string]any{"status": "on"}, "Invalid input for field/attribute status. Value: on. 'on' is not one of"},
		{map[string]any{"status": "enable", "foo": 1}, "Additional properties are not allowed ('foo' was unexpected)"},
		{`{"host": {"status": "enable"}}`, "Additional properties are not allowed ('host' was unexpected)"},
	} {
		h.req("PUT", path, adminTok, "", tc.body).fault(t, 400, "badRequest", tc.msg)
	}
	h.req("PUT", "/compute/v2.1/os-hosts/nope", adminTok, "", map[string]any{"status": "enable"}).
		fault(t, 404, "itemNotFound", "Host 'nope' is not mapped to any cell")
	h.req("PUT", path, memberTok, "", map[string]any{"status": "enable"}).fault(t, 403, "forbidden", "os_compute_api:os-hosts:update")
	h.req("PUT", path, adminTok, "2.43", map[string]any{"status": "enable"}).fault(t, 404, "itemNotFound", msgNotFound)

	for action, rule := range map[string]string{"startup": "start", "shutdown": "shutdown", "reboot": "reboot"} {
		h.req("GET", path+"/"+action, adminTok, "2.42", nil).fault(t, 501, "notImplemented", msgNotSupported)
		h.req("GET", "/compute/v2.1/os-hosts/nope/"+action, adminTok, "", nil).fault(t, 404, "itemNotFound", "not mapped to any cell")
		h.req("GET", path+"/"+action, memberTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-hosts:"+rule)
		h.req("GET", path+"/"+action, adminTok, "2.43", nil).fault(t, 404, "itemNotFound", msgNotFound)
		h.req("POST", path+"/"+action, adminTok, "", nil).fault(t, 405, "badMethod", msgMethodNotAllow)
	}
}
