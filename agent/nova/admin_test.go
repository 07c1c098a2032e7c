package nova

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestLimitsShapesAndUsage(t *testing.T) {
	h := newHarness(t)
	addHostAndServers(h)
	for _, tc := range []struct{ version, file string }{
		{"2.1", "limits/limit-get-resp.json"}, {"2.36", "limits/v2.36/limit-get-resp.json"},
		{"2.39", "limits/v2.39/limit-get-resp.json"}, {"2.57", "limits/v2.57/limit-get-resp.json"},
	} {
		r := h.req("GET", "/compute/v2.1/limits", memberTok, tc.version, nil).expect(t, 200)
		sameShape(t, tc.version+" limits", r.body, sample(t, tc.file))
	}
	abs := h.req("GET", "/compute/v2.1/limits", memberTok, "", nil).obj("limits", "absolute")
	if abs["totalInstancesUsed"] != 1.0 || abs["totalCoresUsed"] != 1.0 || abs["totalRAMUsed"] != 512.0 ||
		abs["maxTotalInstances"] != 10.0 || abs["maxTotalCores"] != 20.0 || abs["maxTotalRAMSize"] != 51200.0 {
		t.Fatalf("absolute %v", abs)
	}
	h.req("GET", "/compute/v2.1/limits?tenant_id=p-other", memberTok, "", nil).
		fault(t, 403, "forbidden", "os_compute_api:limits:other_project")
	abs = h.req("GET", "/compute/v2.1/limits?tenant_id=p-other", adminTok, "", nil).expect(t, 200).obj("limits", "absolute")
	if abs["totalInstancesUsed"] != 1.0 {
		t.Fatalf("admin's view of p-other %v", abs)
	}
}

func TestQuotaSets(t *testing.T) {
	h := newHarness(t)
	addHostAndServers(h)
	for _, tc := range []struct{ version, path, file string }{
		{"2.1", "", "os-quota-sets/quotas-show-get-resp.json"},
		{"2.36", "", "os-quota-sets/v2.36/quotas-show-get-resp.json"},
		{"2.57", "", "os-quota-sets/v2.57/quotas-show-get-resp.json"},
		{"2.1", "/detail", "os-quota-sets/quotas-show-detail-get-resp.json"},
		{"2.57", "/detail", "os-quota-sets/v2.57/quotas-show-detail-get-resp.json"},
		{"2.1", "/defaults", "os-quota-sets/quotas-show-get-resp.json"},
	} {
		r := h.req("GET", "/compute/v2.1/os-quota-sets/p-demo"+tc.path, memberTok, tc.version, nil).expect(t, 200)
		sameShape(t, tc.version+tc.path, r.body, sample(t, tc.file))
		if r.obj("quota_set")["id"] != "p-demo" {
			t.Fatalf("id %v", r.obj("quota_set")["id"])
		}
	}
	d := h.req("GET", "/compute/v2.1/os-quota-sets/p-demo/detail", memberTok, "", nil).obj("quota_set")
	if in := d["instances"].(map[string]any); in["in_use"] != 1.0 || in["limit"] != 10.0 {
		t.Fatalf("instances %v", in)
	}
	h.req("GET", "/compute/v2.1/os-quota-sets/p-other", memberTok, "", nil).
		fault(t, 403, "forbidden", "Policy doesn't allow os_compute_api:os-quota-sets:show to be performed.")
	h.req("GET", "/compute/v2.1/os-quota-sets/p-other", adminTok, "", nil).expect(t, 200)
	h.req("PUT", "/compute/v2.1/os-quota-sets/p-demo", memberTok, "", map[string]any{"quota_set": map[string]any{"instances": 50}}).
		fault(t, 403, "forbidden", "os_compute_api:os-quota-sets:update")
	// Updates are tested in quotas_test.go.
	h.req("PUT", "/compute/v2.1/os-quota-sets/p-demo", adminTok, "", map[string]any{"quota_set": map[string]any{"instances": 50}}).
		expect(t, 200)
}

func TestAvailabilityZones(t *testing.T) {
	h := newHarness(t)
	addHostAndServers(h)
	h.rpc.addHost(&structs.Host{ID: "h2", Name: "compute-2", Status: structs.HostStatusDown, Enabled: true})
	r := h.req("GET", "/compute/v2.1/os-availability-zone", memberTok, "", nil).expect(t, 200)
	sameShape(t, "zones", r.body, sample(t, "os-availability-zone/availability-zone-list-resp.json"))
	zones := map[string]bool{}
	for _, z := range r.list("availabilityZoneInfo") {
		z := z.(map[string]any)
		zones[z["zoneName"].(string)] = z["zoneState"].(map[string]any)["available"].(bool)
	}
	if len(zones) != 2 || !zones["az1"] || zones["nova"] {
		t.Fatalf("zones %v", zones)
	}
	h.req("GET", "/compute/v2.1/os-availability-zone/detail", memberTok, "", nil).
		fault(t, 403, "forbidden", "os_compute_api:os-availability-zone:detail")
	r = h.req("GET", "/compute/v2.1/os-availability-zone/detail", adminTok, "", nil).expect(t, 200)
	sameShape(t, "zones detail", r.body, sample(t, "os-availability-zone/availability-zone-detail-resp.json"))
	internal := r.list("availabilityZoneInfo")[0].(map[string]any)
	if internal["zoneName"] != "internal" || internal["hosts"].(map[string]any)["server-2"].(map[string]any)["nova-scheduler"].(map[string]any)["available"] != false {
		t.Fatalf("internal zone %v", internal)
	}
}

func TestHypervisors(t *testing.T) {
	h := newHarness(t)
	host, mine, _ := addHostAndServers(h)
	h.req("GET", "/compute/v2.1/os-hypervisors", memberTok, "", nil).
		fault(t, 403, "forbidden", "Policy doesn't allow os_compute_api:os-hypervisors:list to be performed.")

	r := h.req("GET", "/compute/v2.1/os-hypervisors", adminTok, "", nil).expect(t, 200)
	sameShape(t, "list", r.body, sample(t, "os-hypervisors/hypervisors-list-resp.json"))
	if hv := r.list("hypervisors")[0].(map[string]any); hv["id"] != float64(host.CreateIndex) || hv["state"] != "up" || hv["status"] != "enabled" {
		t.Fatalf("hypervisor %v", hv)
	}
	r = h.req("GET", "/compute/v2.1/os-hypervisors/detail", adminTok, "", nil).expect(t, 200)
	sameShape(t, "detail", r.body, sample(t, "os-hypervisors/hypervisors-detail-resp.json"))
	hv := r.list("hypervisors")[0].(map[string]any)
	for k, want := range map[string]any{"vcpus": 8.0, "vcpus_used": 1.0, "memory_mb": 16384.0, "memory_mb_used": 1024.0,
		"free_ram_mb": 15360.0, "local_gb": 100.0, "local_gb_used": 1.0, "running_vms": 1.0, "hypervisor_version": 1000.0,
		"host_ip": "10.0.0.5", "hypervisor_type": "fake"} {
		if hv[k] != want {
			t.Errorf("%s = %v, want %v", k, hv[k], want)
		}
	}
	if _, ok := hv["cpu_info"].(string); !ok {
		t.Fatalf("cpu_info before 2.28 is a string: %v", hv["cpu_info"])
	}
	r = h.req("GET", "/compute/v2.1/os-hypervisors/statistics", adminTok, "", nil).expect(t, 200)
	sameShape(t, "statistics", r.body, sample(t, "os-hypervisors/hypervisors-statistics-resp.json"))
	r = h.req("GET", "/compute/v2.1/os-hypervisors/compute/servers", adminTok, "", nil).expect(t, 200)
	sameShape(t, "with servers", r.body, sample(t, "os-hypervisors/hypervisors-with-servers-resp.json"))
	if s := r.list("hypervisors")[0].(map[string]any)["servers"].([]any)[0].(map[string]any); s["uuid"] != mine.ID {
		t.Fatalf("servers %v", s)
	}
	h.req("GET", "/compute/v2.1/os-hypervisors/nothing/search", adminTok, "", nil).fault(t, 404, "itemNotFound", "No hypervisor matching 'nothing'")
	r = h.req("GET", "/compute/v2.1/os-hypervisors/"+itoa(host.CreateIndex), adminTok, "2.28", nil).expect(t, 200)
	sameShape(t, "show 2.28", r.body, sample(t, "os-hypervisors/v2.28/hypervisors-show-resp.json"))
	h.req("GET", "/compute/v2.1/os-hypervisors/"+itoa(host.CreateIndex)+"/uptime", adminTok, "", nil).fault(t, 501, "notImplemented", msgNotSupported)

	r = h.req("GET", "/compute/v2.1/os-hypervisors?limit=1", adminTok, "2.53", nil).expect(t, 200)
	sameShape(t, "list 2.53", r.body, sample(t, "os-hypervisors/v2.53/hypervisors-list-resp.json"))
	r = h.req("GET", "/compute/v2.1/os-hypervisors/detail?limit=1", adminTok, "2.53", nil).expect(t, 200)
	sameShape(t, "detail 2.53", r.body, sample(t, "os-hypervisors/v2.53/hypervisors-detail-resp.json"))
	r = h.req("GET", "/compute/v2.1/os-hypervisors/"+host.ID+"?with_servers=true", adminTok, "2.53", nil).expect(t, 200)
	sameShape(t, "show 2.53", r.body, sample(t, "os-hypervisors/v2.53/hypervisors-show-with-servers-resp.json"))
	h.req("GET", "/compute/v2.1/os-hypervisors/"+itoa(host.CreateIndex), adminTok, "2.53", nil).fault(t, 404, "itemNotFound", "could not be found")
	h.req("GET", "/compute/v2.1/os-hypervisors/compute-1", adminTok, "2.53", nil).fault(t, 404, "itemNotFound", "Hypervisor with ID 'compute-1' could not be found.")
	h.req("GET", "/compute/v2.1/os-hypervisors?hypervisor_hostname_pattern=zzz", adminTok, "2.53", nil).fault(t, 404, "itemNotFound", "No hypervisor matching")

	r = h.req("GET", "/compute/v2.1/os-hypervisors/detail?limit=1", adminTok, "2.88", nil).expect(t, 200)
	sameShape(t, "detail 2.88", r.body, sample(t, "os-hypervisors/v2.88/hypervisors-detail-resp.json"))
	r = h.req("GET", "/compute/v2.1/os-hypervisors?with_servers=1", adminTok, "2.88", nil).expect(t, 200)
	sameShape(t, "with servers 2.88", r.body, sample(t, "os-hypervisors/v2.88/hypervisors-with-servers-resp.json"))
	h.req("GET", "/compute/v2.1/os-hypervisors/"+host.ID+"/uptime", adminTok, "2.88", nil).fault(t, 404, "itemNotFound", "could not be found")
}

func TestServices(t *testing.T) {
	h := newHarness(t)
	host, _, _ := addHostAndServers(h)
	h.req("GET", "/compute/v2.1/os-services", memberTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-services:list")
	for _, tc := range []struct{ version, file string }{
		{"2.1", "os-services/services-list-get-resp.json"}, {"2.11", "os-services/v2.11/services-list-get-resp.json"},
		{"2.53", "os-services/v2.53/services-list-get-resp.json"},
	} {
		r := h.req("GET", "/compute/v2.1/os-services", adminTok, tc.version, nil).expect(t, 200)
		sameShape(t, tc.version+" services", r.body, sample(t, tc.file))
		if n := len(r.list("services")); n != 5 {
			t.Fatalf("%d services", n)
		}
	}
	r := h.req("GET", "/compute/v2.1/os-services?binary=nova-compute", adminTok, "2.53", nil).expect(t, 200)
	svc := r.list("services")[0].(map[string]any)
	if svc["host"] != "compute-1" || svc["zone"] != "az1" || svc["state"] != "up" || svc["status"] != "enabled" {
		t.Fatalf("compute service %v", svc)
	}
	// 2.53: PUT by id.
	r = h.req("PUT", "/compute/v2.1/os-services/"+svc["id"].(string), adminTok, "2.53",
		sample(t, "os-services/v2.53/service-disable-log-put-req.json")).expect(t, 200)
	sameShape(t, "disabled", r.body, sample(t, "os-services/v2.53/service-disable-log-put-resp.json"))
	if args := h.rpc.lastCall("Host.UpdateEnabled").(*structs.HostUpdateEnabledRequest); args.HostID != host.ID || args.Enabled || args.Reason != "maintenance" {
		t.Fatalf("UpdateEnabled %+v", args)
	}
	if s := r.obj("service"); s["status"] != "disabled" || s["disabled_reason"] != "maintenance" {
		t.Fatalf("service %v", s)
	}
	h.req("PUT", "/compute/v2.1/os-services/"+svc["id"].(string), adminTok, "2.53", map[string]any{"status": "enabled", "disabled_reason": "x"}).
		fault(t, 400, "badRequest", "Specifying a disabled reason is not supported unless disabling the service.")
	// forced_down and service delete: services_real_test.go.
	sched := h.req("GET", "/compute/v2.1/os-services?binary=nova-scheduler", adminTok, "2.53", nil).list("services")[0].(map[string]any)
	h.req("PUT", "/compute/v2.1/os-services/"+sched["id"].(string), adminTok, "2.53", map[string]any{"status": "disabled"}).
		fault(t, 400, "badRequest", "Updating a nova-scheduler service is not supported.")
	h.req("PUT", "/compute/v2.1/os-services/00000000-0000-0000-0000-000000000000", adminTok, "2.53", map[string]any{"status": "disabled"}).
		fault(t, 404, "itemNotFound", "could not be found")

	// Before 2.53: PUT /os-services/{action} with host and binary.
	r = h.req("PUT", "/compute/v2.1/os-services/disable-log-reason", adminTok, "", sample(t, "os-services/service-disable-log-put-req.json"))
	r.fault(t, 404, "itemNotFound", "Compute host host1 with binary nova-compute could not be found.")
	r = h.req("PUT", "/compute/v2.1/os-services/disable-log-reason", adminTok, "",
		map[string]any{"host": "compute-1", "binary": "nova-compute", "disabled_reason": "test2"}).expect(t, 200)
	sameShape(t, "disable-log-reason", r.body, sample(t, "os-services/service-disable-log-put-resp.json"))
	h.req("PUT", "/compute/v2.1/os-services/enable", adminTok, "", map[string]any{"host": "compute-1", "binary": "nova-compute"}).expect(t, 200)
	if !h.rpc.hosts[host.ID].Enabled {
		t.Fatal("host not enabled")
	}
	h.req("PUT", "/compute/v2.1/os-services/hibernate", adminTok, "", map[string]any{"host": "compute-1", "binary": "nova-compute"}).
		fault(t, 404, "itemNotFound", "Unknown action")
}

func itoa(n uint64) string {
	return jsonNumber(n)
}
