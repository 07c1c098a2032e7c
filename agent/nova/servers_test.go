package nova

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// addHostAndServers registers a host and one active server each in
// p-demo and p-other; it returns the demo server.
func addHostAndServers(h *harness) (*structs.Host, *structs.Instance, *structs.Instance) {
	host := h.rpc.addHost(&structs.Host{ID: "6a1c5b0e-3e2f-4a8e-9b53-0f6e1d2c3b4a", Name: "compute-1", AZ: "az1",
		Status: structs.HostStatusUp, Enabled: true, HypervisorType: "fake", HypervisorVersion: "1.0", Arch: "x86_64",
		HTTPAddr: "10.0.0.5:4646", StatusUpdatedAt: time.Now().UnixNano(),
		Inventories: map[string]*structs.Inventory{
			structs.ResourceVCPU:     {Total: 8, AllocationRatio: 4},
			structs.ResourceMemoryMB: {Total: 16384, Reserved: 512, AllocationRatio: 1},
			structs.ResourceDiskGB:   {Total: 100, AllocationRatio: 1},
		},
		Usage: map[string]int64{structs.ResourceVCPU: 1, structs.ResourceMemoryMB: 512, structs.ResourceDiskGB: 1}})
	tiny := h.rpc.flavors["1"].Copy()
	now := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC).UnixNano()
	mine := h.rpc.addInstance(&structs.Instance{Name: "web", ProjectID: "p-demo", UserID: "u-alice", ReservationID: "r-1",
		FlavorID: "1", Flavor: tiny, ImageID: "cirros", HostID: host.ID, AZ: "az1", KeyName: "k",
		VMState: structs.VMStateActive, PowerState: structs.PowerRunning, Metadata: map[string]string{"role": "fe"},
		CreatedAt: now, UpdatedAt: now + int64(time.Second)})
	theirs := h.rpc.addInstance(&structs.Instance{Name: "db", ProjectID: "p-other", UserID: "u-bob", FlavorID: "1",
		Flavor: tiny, ImageID: "cirros", VMState: structs.VMStateBuilding, TaskState: structs.TaskScheduling,
		CreatedAt: now, UpdatedAt: now})
	return host, mine, theirs
}

func TestServerShowShapesPerMicroversion(t *testing.T) {
	h := newHarness(t)
	_, mine, _ := addHostAndServers(h)
	path := "/compute/v2.1/servers/" + mine.ID
	// Samples up to 2.73 were taken as an admin, 2.90 and 2.96 as a
	// member. A server without ports has no security_groups in Nova.
	for _, tc := range []struct{ version, file, tok string }{
		{"2.1", "servers/server-get-resp.json", adminTok},
		{"2.3", "servers/v2.3/server-get-resp.json", adminTok},
		{"2.9", "servers/v2.9/server-get-resp.json", adminTok},
		{"2.16", "servers/v2.16/server-get-resp.json", adminTok},
		{"2.19", "servers/v2.19/server-get-resp.json", adminTok},
		{"2.47", "servers/v2.47/server-get-resp.json", adminTok},
		{"2.73", "servers/v2.73/server-get-resp.json", adminTok},
		{"2.90", "servers/v2.90/server-get-resp.json", memberTok},
		{"2.96", "servers/v2.96/server-get-resp.json", memberTok},
	} {
		r := h.req("GET", path, tc.tok, tc.version, nil).expect(t, 200)
		want := sample(t, tc.file)
		delete(want["server"].(map[string]any), "security_groups")
		sameShape(t, tc.version+" server", r.body, want)
	}

	r := h.req("GET", path, memberTok, "", nil).expect(t, 200)
	s := r.obj("server")
	sum := sha256.Sum224([]byte("p-demo" + "compute-1"))
	for k, want := range map[string]any{
		"id": mine.ID, "name": "web", "status": "ACTIVE", "tenant_id": "p-demo", "user_id": "u-alice",
		"hostId": hex.EncodeToString(sum[:]), "created": "2026-11-29T21:00:00Z", "updated": "2026-11-29T21:00:01Z",
		"OS-EXT-STS:vm_state": "active", "OS-EXT-STS:task_state": nil, "OS-EXT-STS:power_state": 1.0,
		"OS-EXT-AZ:availability_zone": "az1", "key_name": "k", "accessIPv4": "", "config_drive": "", "progress": 0.0,
		"OS-DCF:diskConfig": "MANUAL",
	} {
		if s[k] != want {
			t.Errorf("%s = %v, want %v", k, s[k], want)
		}
	}
	if _, ok := s["OS-EXT-SRV-ATTR:host"]; ok {
		t.Fatal("a member sees the extended server attributes")
	}
	if img := s["image"].(map[string]any); img["id"] != "cirros" ||
		img["links"].([]any)[0].(map[string]any)["href"] != h.srv.URL+"/compute/images/cirros" {
		t.Fatalf("image %v", img)
	}
	r = h.req("GET", path, adminTok, "2.16", nil).expect(t, 200)
	if s := r.obj("server"); s["OS-EXT-SRV-ATTR:host"] != "compute-1" || s["host_status"] != "UP" {
		t.Fatalf("admin view %v", s)
	}
	r = h.req("GET", path, memberTok, "2.47", nil).expect(t, 200)
	if f := r.obj("server", "flavor"); f["original_name"] != "m1.tiny" || f["ram"] != 512.0 || f["swap"] != 0.0 {
		t.Fatalf("2.47 flavor %v", f)
	}
}

func TestServerFault(t *testing.T) {
	h := newHarness(t)
	inst := h.rpc.addInstance(&structs.Instance{Name: "bad", ProjectID: "p-demo", FlavorID: "1", Flavor: h.rpc.flavors["1"],
		VMState: structs.VMStateError, Fault: &structs.Fault{Code: 500, Message: "No valid host was found.", Details: "trace", CreatedAt: 1}})
	r := h.req("GET", "/compute/v2.1/servers/"+inst.ID, memberTok, "", nil).expect(t, 200)
	f := r.obj("server", "fault")
	if r.obj("server")["status"] != "ERROR" || f["code"] != 500.0 || f["message"] != "No valid host was found." || f["details"] != nil {
		t.Fatalf("member fault %v", f)
	}
	if _, ok := r.obj("server")["progress"]; ok {
		t.Fatal("progress shown for an ERROR server")
	}
	if f := h.req("GET", "/compute/v2.1/servers/"+inst.ID, adminTok, "", nil).obj("server", "fault"); f["details"] != "trace" {
		t.Fatalf("admin fault %v", f)
	}
}

func TestServerPolicyByProject(t *testing.T) {
	h := newHarness(t)
	_, mine, theirs := addHostAndServers(h)
	h.req("GET", "/compute/v2.1/servers/"+theirs.ID, memberTok, "", nil).
		fault(t, 404, "itemNotFound", "Instance "+theirs.ID+" could not be found.")
	h.req("DELETE", "/compute/v2.1/servers/"+theirs.ID, memberTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")
	h.req("POST", "/compute/v2.1/servers/"+theirs.ID+"/action", memberTok, "", map[string]any{"os-stop": nil}).
		fault(t, 404, "itemNotFound", "could not be found")
	h.req("GET", "/compute/v2.1/servers/"+theirs.ID+"/metadata", memberTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")
	h.req("GET", "/compute/v2.1/servers/"+theirs.ID, adminTok, "", nil).expect(t, 200)

	r := h.req("GET", "/compute/v2.1/servers", memberTok, "", nil).expect(t, 200)
	if l := r.list("servers"); len(l) != 1 || l[0].(map[string]any)["id"] != mine.ID {
		t.Fatalf("member list %v", l)
	}
	h.req("GET", "/compute/v2.1/servers?all_tenants=1", memberTok, "", nil).
		fault(t, 403, "forbidden", "Policy doesn't allow os_compute_api:servers:index:get_all_tenants to be performed.")
	h.req("GET", "/compute/v2.1/servers/detail?all_tenants=true", memberTok, "", nil).
		fault(t, 403, "forbidden", "os_compute_api:servers:detail:get_all_tenants")
	if l := h.req("GET", "/compute/v2.1/servers?all_tenants=1", adminTok, "", nil).list("servers"); len(l) != 2 {
		t.Fatalf("admin all_tenants %v", l)
	}
	if l := h.req("GET", "/compute/v2.1/servers?all_tenants=1&tenant_id=p-other", adminTok, "", nil).list("servers"); len(l) != 1 {
		t.Fatalf("admin all_tenants for p-other %v", l)
	}
	if l := h.req("GET", "/compute/v2.1/servers", adminTok, "", nil).list("servers"); len(l) != 0 {
		t.Fatalf("admin's own project %v", l)
	}
	// Readers read but may not act.
	h.req("GET", "/compute/v2.1/servers/"+mine.ID, readerTok, "", nil).expect(t, 200)
	h.req("DELETE", "/compute/v2.1/servers/"+mine.ID, readerTok, "", nil).
		fault(t, 403, "forbidden", "Policy doesn't allow os_compute_api:servers:delete to be performed.")
	h.req("POST", "/compute/v2.1/servers/"+mine.ID+"/action", readerTok, "", map[string]any{"reboot": map[string]any{"type": "SOFT"}}).
		fault(t, 403, "forbidden", "os_compute_api:servers:reboot")
}

func TestServerListDetailFiltersAndPages(t *testing.T) {
	h := newHarness(t)
	_, mine, _ := addHostAndServers(h)
	var ids []string
	for i := range 3 {
		inst := h.rpc.addInstance(&structs.Instance{Name: "batch", ProjectID: "p-demo", FlavorID: "2", Flavor: h.rpc.flavors["2"],
			ImageID: "ubuntu", VMState: structs.VMStateStopped, CreatedAt: mine.CreatedAt + int64(i+1)*int64(time.Hour),
			UpdatedAt: mine.CreatedAt + int64(i+1)*int64(time.Hour)})
		ids = append(ids, inst.ID)
	}
	r := h.req("GET", "/compute/v2.1/servers/detail?status=ACTIVE", memberTok, "2.96", nil).expect(t, 200)
	want := sample(t, "servers/v2.96/servers-details-resp.json")
	for _, s := range want["servers"].([]any) {
		delete(s.(map[string]any), "security_groups")
	}
	delete(want, "servers_links")
	sameShape(t, "servers detail", r.body, want)
	r = h.req("GET", "/compute/v2.1/servers/detail", memberTok, "2.96", nil).expect(t, 200)
	// Newest first.
	if l := r.list("servers"); len(l) != 4 || l[0].(map[string]any)["id"] != ids[2] || l[3].(map[string]any)["id"] != mine.ID {
		t.Fatalf("order %v", l)
	}
	r = h.req("GET", "/compute/v2.1/servers", memberTok, "", nil).expect(t, 200)
	sameKeys(t, "servers index item", r.list("servers")[0].(map[string]any), sample(t, "servers/servers-list-resp.json")["servers"].([]any)[0].(map[string]any))

	count := func(query string) int {
		t.Helper()
		return len(h.req("GET", "/compute/v2.1/servers/detail?"+query, memberTok, "2.83", nil).expect(t, 200).list("servers"))
	}
	for query, want := range map[string]int{
		"status=SHUTOFF": 3, "status=active": 1, "status=ACTIVE&status=SHUTOFF": 4, "name=^we": 1, "name=batch": 3,
		"flavor=2": 3, "image=cirros": 1, "availability_zone=az1": 1, "key_name=k": 1, "ip=10.0.0.1": 0,
		"changes-since=2026-11-29T22:30:00Z": 2, "vm_state=stopped": 3, "host=compute-1": 4, "locked=false": 4,
		"power_state=1": 1,
	} {
		if got := count(query); got != want {
			t.Errorf("%s: %d servers, want %d", query, got, want)
		}
	}
	h.req("GET", "/compute/v2.1/servers?status=SLEEPY", memberTok, "2.38", nil).fault(t, 400, "badRequest", "Invalid status value")
	if n := len(h.req("GET", "/compute/v2.1/servers?status=SLEEPY", memberTok, "2.37", nil).list("servers")); n != 0 {
		t.Fatalf("unknown status before 2.38 matched %d", n)
	}
	h.req("GET", "/compute/v2.1/servers?changes-since=yesterday", memberTok, "", nil).fault(t, 400, "badRequest", "changes-since")

	r = h.req("GET", "/compute/v2.1/servers?sort_key=display_name&sort_dir=asc&limit=2", memberTok, "", nil).expect(t, 200)
	l := r.list("servers")
	if len(l) != 2 || l[0].(map[string]any)["name"] != "batch" {
		t.Fatalf("sorted page %v", l)
	}
	next := r.list("servers_links")[0].(map[string]any)["href"].(string)
	if !strings.HasPrefix(next, h.srv.URL+"/compute/v2.1/servers?") || !strings.Contains(next, "marker="+l[1].(map[string]any)["id"].(string)) {
		t.Fatalf("next %s", next)
	}
	h.req("GET", "/compute/v2.1/servers?sort_key=host", memberTok, "", nil).fault(t, 403, "forbidden", "sort_key:host")
	h.req("GET", "/compute/v2.1/servers?sort_key=favourite", memberTok, "", nil).fault(t, 400, "badRequest", "sort_key")
	h.req("GET", "/compute/v2.1/servers?marker=nope", memberTok, "", nil).fault(t, 400, "badRequest", "marker [nope] not found")
	h.req("GET", "/compute/v2.1/servers?colour=red", memberTok, "2.75", nil).fault(t, 400, "badRequest", "'colour' was unexpected")
}

func TestServerCreate(t *testing.T) {
	h := newHarness(t)
	h.rpc.keypairs["u-alice/mykey"] = &structs.KeyPair{Name: "mykey", UserID: "u-alice", Type: "ssh", PublicKey: "x"}
	body := sample(t, "servers/server-create-req.json")
	srv := body["server"].(map[string]any)
	srv["availability_zone"] = "az1"
	srv["key_name"] = "mykey"
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", body).expect(t, 202)
	sameShape(t, "create response", r.body, sample(t, "servers/server-create-resp.json"))
	id := r.obj("server")["id"].(string)
	if loc := r.header.Get("Location"); loc != h.srv.URL+"/compute/v2.1/servers/"+id {
		t.Fatalf("Location %q", loc)
	}
	if p := r.obj("server")["adminPass"].(string); len(p) != 12 {
		t.Fatalf("adminPass %q", p)
	}
	args := h.rpc.lastCall("Instance.Create").(*structs.InstanceCreateRequest)
	if args.Name != "new-server-test" || args.FlavorID != "1" || args.ImageID != "70a599e0-31e7-49b7-b260-868f441e862b" ||
		args.AZ != "az1" || args.KeyName != "mykey" || args.Count != 1 || args.ProjectID != "p-demo" || args.UserID != "u-alice" ||
		args.Metadata["My Server Name"] != "Apache1" || args.AuthToken != memberTok {
		t.Fatalf("Instance.Create args %+v", args)
	}
	// gophercloud's minimal body, with a flavor link and a description.
	r = h.req("POST", "/compute/v2.1/servers", memberTok, "2.19", map[string]any{"server": map[string]any{
		"name": "g", "imageRef": "cirros", "flavorRef": "http://x/compute/flavors/2", "description": "d", "adminPass": "pw"}}).expect(t, 202)
	if r.obj("server")["adminPass"] != "pw" {
		t.Fatalf("adminPass %v", r.obj("server")["adminPass"])
	}
	if args := h.rpc.lastCall("Instance.Create").(*structs.InstanceCreateRequest); args.FlavorID != "2" || args.Description != "d" {
		t.Fatalf("args %+v", args)
	}
	r = h.req("GET", "/compute/v2.1/servers/"+r.obj("server")["id"].(string), memberTok, "2.19", nil).expect(t, 200)
	if s := r.obj("server"); s["status"] != "BUILD" || s["description"] != "d" || s["hostId"] != "" {
		t.Fatalf("new server %v", s)
	}

	// Multi-create: max_count servers, the reservation when asked.
	mc := sample(t, "os-multiple-create/multiple-create-post-req.json")
	r = h.req("POST", "/compute/v2.1/servers", memberTok, "", mc).expect(t, 202)
	if res, _ := r.body["reservation_id"].(string); !strings.HasPrefix(res, "r-") || len(r.body) != 1 {
		t.Fatalf("reservation %s", r.raw)
	}
	if args := h.rpc.lastCall("Instance.Create").(*structs.InstanceCreateRequest); args.Count != 3 {
		t.Fatalf("count %d", args.Count)
	}

	base := func() map[string]any { return map[string]any{"name": "x", "imageRef": "cirros", "flavorRef": "1"} }
	for _, tc := range []struct {
		mutate func(map[string]any)
		status int
		msg    string
	}{
		{func(s map[string]any) { s["flavorRef"] = "99" }, 400, "Invalid flavorRef provided."},
		{func(s map[string]any) { s["flavorRef"] = "m1.tiny" }, 400, "Invalid flavorRef provided."},
		{func(s map[string]any) { delete(s, "imageRef") }, 400, "Missing imageRef attribute"},
		{func(s map[string]any) { s["key_name"] = "nope" }, 400, "Invalid key_name provided."},
		{func(s map[string]any) { s["min_count"], s["max_count"] = 3, 2 }, 400, "min_count must be <= max_count"},
		{func(s map[string]any) { s["user_data"] = "not base64!" }, 400, "is not a 'base64'"},
		{func(s map[string]any) { s["networks"] = []any{map[string]any{"uuid": "n1"}} }, 400, "Bad networks format: network uuid is not in proper format (n1)"},
		{func(s map[string]any) {
			s["networks"] = []any{map[string]any{"port": "5f6b3d2e-4a8b-4c1d-9e0f-123456789abc", "fixed_ip": "10.0.0.5"}}
		}, 400, "cannot be used with port"},
		{func(s map[string]any) { s["block_device_mapping_v2"] = []any{map[string]any{}} }, 400, "Block Device Mapping is Invalid: Missing device UUID."},
		{func(s map[string]any) { s["availability_zone"] = "az1:compute-1" }, 403, "os_compute_api:servers:create:forced_host"},
		{func(s map[string]any) { s["description"] = "too early" }, 400, "'description' was unexpected"},
		{func(s map[string]any) {
			m := map[string]any{}
			for i := range 129 {
				m["k"+strings.Repeat("x", i)] = "v"
			}
			s["metadata"] = m
		}, 403, "Maximum number of metadata items exceeds 128"},
	} {
		s := base()
		tc.mutate(s)
		r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": s})
		if r.status != tc.status || !strings.Contains(string(r.raw), tc.msg) {
			t.Errorf("%v: %d %s, want %d %q", s, r.status, r.raw, tc.status, tc.msg)
		}
	}
	// networks is required from 2.37, and "auto"/"none" are accepted.
	h.req("POST", "/compute/v2.1/servers", memberTok, "2.37", map[string]any{"server": base()}).
		fault(t, 400, "badRequest", "'networks' is a required property")
	s := base()
	s["networks"] = "auto"
	h.req("POST", "/compute/v2.1/servers", memberTok, "2.37", map[string]any{"server": s}).expect(t, 202)
	s["networks"] = "some"
	h.req("POST", "/compute/v2.1/servers", memberTok, "2.37", map[string]any{"server": s}).expect(t, 400)
	h.req("POST", "/compute/v2.1/servers", readerTok, "", map[string]any{"server": base()}).
		fault(t, 403, "forbidden", "os_compute_api:servers:create")
}

func TestServerUpdateAndDelete(t *testing.T) {
	h := newHarness(t)
	_, mine, _ := addHostAndServers(h)
	path := "/compute/v2.1/servers/" + mine.ID
	r := h.req("PUT", path, memberTok, "2.19", sample(t, "servers/v2.19/server-put-req.json")).expect(t, 200)
	want := sample(t, "servers/v2.19/server-put-resp.json")
	sameShape(t, "2.19 update", r.body, want)
	if s := r.obj("server"); s["name"] != "updated-server-test" || s["description"] != "updated-server-description" {
		t.Fatalf("updated %v", s)
	}
	// From 2.75 PUT answers with the whole server.
	r = h.req("PUT", path, memberTok, "2.75", map[string]any{"server": map[string]any{"name": "again"}}).expect(t, 200)
	if _, ok := r.obj("server")["OS-EXT-STS:vm_state"]; !ok || r.obj("server")["name"] != "again" {
		t.Fatalf("2.75 update %v", r.obj("server"))
	}
	if got := h.req("PUT", path, memberTok, "", map[string]any{"server": map[string]any{"accessIPv4": "1.2.3.4"}}).
		expect(t, 200).obj("server"); got["accessIPv4"] != "1.2.3.4" || got["accessIPv6"] != "" {
		t.Fatalf("access IPs %v %v", got["accessIPv4"], got["accessIPv6"])
	}
	h.req("PUT", path, memberTok, "", map[string]any{"server": map[string]any{"description": "x"}}).
		fault(t, 400, "badRequest", "'description' was unexpected")
	h.req("DELETE", path, memberTok, "", nil).expect(t, 204)
	h.req("GET", path, memberTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")
}

func TestServerMetadataAndIPs(t *testing.T) {
	h := newHarness(t)
	_, mine, _ := addHostAndServers(h)
	base := "/compute/v2.1/servers/" + mine.ID
	r := h.req("GET", base+"/metadata", memberTok, "", nil).expect(t, 200)
	sameShape(t, "metadata", r.body, sample(t, "server-metadata/server-metadata-all-resp.json"))
	r = h.req("GET", base+"/metadata/role", memberTok, "", nil).expect(t, 200)
	sameShape(t, "meta", r.body, sample(t, "server-metadata/server-metadata-resp.json"))
	h.req("GET", base+"/metadata/nope", memberTok, "", nil).fault(t, 404, "itemNotFound", "Metadata item was not found")

	r = h.req("POST", base+"/metadata", memberTok, "", map[string]any{"metadata": map[string]any{"foo": "Foo Value"}}).expect(t, 200)
	if m := r.obj("metadata"); m["foo"] != "Foo Value" || m["role"] != "fe" {
		t.Fatalf("merged %v", m)
	}
	r = h.req("PUT", base+"/metadata/foo", memberTok, "", map[string]any{"meta": map[string]any{"foo": "Bar"}}).expect(t, 200)
	if r.obj("meta")["foo"] != "Bar" || h.rpc.instances[mine.ID].Metadata["foo"] != "Bar" {
		t.Fatalf("set %s", r.raw)
	}
	h.req("PUT", base+"/metadata/foo", memberTok, "", map[string]any{"meta": map[string]any{"bar": "x"}}).
		fault(t, 400, "badRequest", "Request body and URI mismatch")
	r = h.req("PUT", base+"/metadata", memberTok, "", map[string]any{"metadata": map[string]any{"only": "1"}}).expect(t, 200)
	if m := r.obj("metadata"); len(m) != 1 || m["only"] != "1" {
		t.Fatalf("replaced %v", m)
	}
	h.req("DELETE", base+"/metadata/only", memberTok, "", nil).expect(t, 204)
	h.req("DELETE", base+"/metadata/only", memberTok, "", nil).fault(t, 404, "itemNotFound", "Metadata item was not found")
	h.req("POST", base+"/metadata", readerTok, "", map[string]any{"metadata": map[string]any{}}).
		fault(t, 403, "forbidden", "os_compute_api:server-metadata:create")

	r = h.req("GET", base+"/ips", memberTok, "", nil).expect(t, 200)
	if a := r.obj("addresses"); a == nil || len(a) != 0 {
		t.Fatalf("ips %s", r.raw)
	}
	h.req("GET", base+"/ips/private", memberTok, "", nil).fault(t, 404, "itemNotFound", "not a member of specified network")

	r = h.req("GET", base+"/tags", memberTok, "2.26", nil).expect(t, 200)
	if tags := r.list("tags"); tags == nil || len(tags) != 0 {
		t.Fatalf("tags %s", r.raw)
	}
	h.req("GET", base+"/tags", memberTok, "2.25", nil).fault(t, 404, "itemNotFound", "could not be found")
	h.req("GET", base+"/tags/blue", memberTok, "2.26", nil).fault(t, 404, "itemNotFound", "Tag blue could not be found.")
	// Tag writes are tested against a real server (server_tags_test.go).

	// Metadata changes wait for a stable state.
	h.rpc.instances[mine.ID].VMState = structs.VMStateBuilding
	h.req("POST", base+"/metadata", memberTok, "", map[string]any{"metadata": map[string]any{"a": "b"}}).
		fault(t, 409, "conflictingRequest", "while it is in vm_state building")
}

// TestAllTenantsWithoutAValueMeansTrue: as Nova's is_all_tenants, an
// empty all_tenants enables it, the last of repeated values counts, and
// anything but a boolean string is a 400.
func TestAllTenantsWithoutAValueMeansTrue(t *testing.T) {
	h := newHarness(t)
	addHostAndServers(h)
	for query, n := range map[string]int{"all_tenants": 2, "all_tenants=": 2, "all_tenants=0&all_tenants": 2,
		"all_tenants&all_tenants=false": 0, "all_tenants=no": 0, "all_tenants=YES": 2} {
		for _, list := range []string{"servers", "servers/detail"} {
			r := h.req("GET", "/compute/v2.1/"+list+"?"+query, adminTok, "", nil).expect(t, 200)
			if l := r.list("servers"); len(l) != n {
				t.Fatalf("%s?%s: %d servers, want %d", list, query, len(l), n)
			}
		}
	}
	h.req("GET", "/compute/v2.1/servers?all_tenants", memberTok, "", nil).
		fault(t, 403, "forbidden", "os_compute_api:servers:index:get_all_tenants")
	h.req("GET", "/compute/v2.1/servers/detail?all_tenants=", memberTok, "", nil).
		fault(t, 403, "forbidden", "os_compute_api:servers:detail:get_all_tenants")
	h.req("GET", "/compute/v2.1/servers?all_tenants=maybe", adminTok, "", nil).
		fault(t, 400, "badRequest", "Invalid input received: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'")
	h.req("GET", "/compute/v2.1/servers?all_tenants=%20", adminTok, "", nil).fault(t, 400, "badRequest", "Invalid input received")
}
