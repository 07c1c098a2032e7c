package nova

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

const groupsPath = "/compute/v2.1/os-server-groups"

func createGroup(t *testing.T, h *harness, tok, version string, body any) map[string]any {
	t.Helper()
	return h.req("POST", groupsPath, tok, version, body).expect(t, 200).obj("server_group")
}

func TestServerGroupShapesPerMicroversion(t *testing.T) {
	for _, dir := range []struct{ version, dir string }{{"2.1", ""}, {"2.13", "v2.13/"}, {"2.64", "v2.64/"}} {
		h := newHarness(t)
		p := "os-server-groups/" + dir.dir
		r := h.req("POST", groupsPath, memberTok, dir.version, sample(t, p+"server-groups-post-req.json")).expect(t, 200)
		sameShape(t, dir.version+" create", r.body, sample(t, p+"server-groups-post-resp.json"))
		g := r.obj("server_group")
		r = h.req("GET", groupsPath+"/"+g["id"].(string), memberTok, dir.version, nil).expect(t, 200)
		sameShape(t, dir.version+" show", r.body, sample(t, p+"server-groups-get-resp.json"))
		r = h.req("GET", groupsPath, memberTok, dir.version, nil).expect(t, 200)
		sameShape(t, dir.version+" list", r.body, sample(t, p+"server-groups-list-resp.json"))
	}
	h := newHarness(t)
	g := createGroup(t, h, memberTok, "2.64", sample(t, "os-server-groups/v2.64/server-groups-post-req.json"))
	if g["policy"] != "anti-affinity" || !reflect.DeepEqual(g["rules"], map[string]any{"max_server_per_host": 3.0}) ||
		g["project_id"] != "p-demo" || g["user_id"] != "u-alice" || g["name"] != "test" {
		t.Fatalf("2.64 group %v", g)
	}
	g = createGroup(t, h, memberTok, "2.64", map[string]any{"server_group": map[string]any{"name": "a", "policy": "affinity"}})
	if !reflect.DeepEqual(g["rules"], map[string]any{}) {
		t.Fatalf("no rules %v", g["rules"])
	}
	// The same group read before 2.64 shows policies and metadata.
	old := h.req("GET", groupsPath+"/"+g["id"].(string), memberTok, "2.63", nil).obj("server_group")
	if !reflect.DeepEqual(old["policies"], []any{"affinity"}) || old["policy"] != nil || old["rules"] != nil {
		t.Fatalf("2.63 view %v", old)
	}
	createGroup(t, h, memberTok, "2.15", map[string]any{"server_group": map[string]any{"name": "s", "policies": []any{"soft-affinity"}}})
}

func TestServerGroupCreateValidation(t *testing.T) {
	h := newHarness(t)
	group := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return map[string]any{"server_group": m}
	}
	for _, tc := range []struct {
		version string
		body    any
		msg     string
	}{
		{"2.1", "{", "Malformed request body"},
		{"2.1", group("name", "x"), "'policies' is a required property"},
		{"2.1", group("name", "x", "policies", []any{"soft-affinity"}), "is not one of"},
		{"2.15", group("name", "x", "policies", []any{"affinity", "anti-affinity"}), "is too long"},
		{"2.15", group("name", "x", "policies", []any{}), "is too short"},
		{"2.15", group("name", "", "policies", []any{"affinity"}), "is too short"},
		{"2.63", group("name", "x", "policies", []any{"affinity"}, "policy", "affinity"), "Additional properties are not allowed"},
		{"2.64", group("name", "x", "policies", []any{"affinity"}), "'policy' is a required property"},
		{"2.64", group("name", "x", "policy", "affinity", "rules", map[string]any{"max_server_per_host": 2}), "Only anti-affinity policy supports rules."},
		{"2.64", group("name", "x", "policy", "anti-affinity", "rules", map[string]any{"max_server_per_host": 0}), "less than the minimum of 1"},
		{"2.64", group("name", "x", "policy", "anti-affinity", "rules", map[string]any{"other": 1}), "Additional properties are not allowed"},
		{"2.64", group("name", "x", "policy", "spread"), "is not one of"},
		{"2.64", map[string]any{"server_group": map[string]any{"name": "x", "policy": "affinity"}, "extra": 1}, "Additional properties are not allowed"},
	} {
		h.req("POST", groupsPath, memberTok, tc.version, tc.body).fault(t, 400, "badRequest", tc.msg)
	}
	// A string max_server_per_host of digits is accepted, as Nova does.
	g := createGroup(t, h, memberTok, "2.64", group("name", "x", "policy", "anti-affinity", "rules", map[string]any{"max_server_per_host": "2"}))
	if g["rules"].(map[string]any)["max_server_per_host"] != 2.0 {
		t.Fatalf("rules %v", g["rules"])
	}
}

func TestServerGroupPolicyAndPaging(t *testing.T) {
	h := newHarness(t)
	body := func(name string) any {
		return map[string]any{"server_group": map[string]any{"name": name, "policies": []any{"anti-affinity"}}}
	}
	mine := createGroup(t, h, memberTok, "", body("mine"))
	createGroup(t, h, memberTok, "", body("mine-2"))
	theirs := createGroup(t, h, otherTok, "", body("theirs"))
	createGroup(t, h, adminTok, "", body("admins"))

	// Readers read, only members create and delete.
	h.req("GET", groupsPath+"/"+mine["id"].(string), readerTok, "", nil).expect(t, 200)
	h.req("POST", groupsPath, readerTok, "", body("x")).fault(t, 403, "forbidden", "os_compute_api:os-server-groups:create")
	h.req("DELETE", groupsPath+"/"+mine["id"].(string), readerTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-server-groups:delete")
	h.req("GET", groupsPath, noRoleTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-server-groups:index")

	// Another project's group is not found; its all_projects is ignored.
	id := theirs["id"].(string)
	h.req("GET", groupsPath+"/"+id, memberTok, "", nil).fault(t, 404, "itemNotFound", "Instance group "+id+" could not be found.")
	h.req("DELETE", groupsPath+"/"+id, memberTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")
	names := func(r *response) []string {
		var out []string
		for _, g := range r.list("server_groups") {
			out = append(out, g.(map[string]any)["name"].(string))
		}
		return out
	}
	for _, path := range []string{groupsPath, groupsPath + "?all_projects=True"} {
		if got := names(h.req("GET", path, memberTok, "", nil).expect(t, 200)); !reflect.DeepEqual(got, []string{"mine", "mine-2"}) {
			t.Fatalf("%s: %v", path, got)
		}
	}
	if got := names(h.req("GET", groupsPath, adminTok, "", nil)); !reflect.DeepEqual(got, []string{"admins"}) {
		t.Fatalf("admin's own %v", got)
	}
	if got := names(h.req("GET", groupsPath+"?all_projects", adminTok, "", nil)); len(got) != 4 {
		t.Fatalf("all projects %v", got)
	}
	if got := names(h.req("GET", groupsPath+"?all_projects=1&offset=1&limit=2", adminTok, "", nil)); !reflect.DeepEqual(got, []string{"mine-2", "theirs"}) {
		t.Fatalf("page %v", got)
	}
	h.req("GET", groupsPath+"?limit=-1", memberTok, "", nil).fault(t, 400, "badRequest", "Invalid input for query parameters limit")
	h.req("GET", groupsPath+"?sort=name", memberTok, "2.75", nil).fault(t, 400, "badRequest", "Additional properties are not allowed")
	h.req("GET", groupsPath+"?sort=name", memberTok, "2.74", nil).expect(t, 200)
	// An admin reaches any group.
	h.req("GET", groupsPath+"/"+id, adminTok, "", nil).expect(t, 200)

	h.req("DELETE", groupsPath+"/"+mine["id"].(string), memberTok, "", nil).expect(t, 204)
	h.req("GET", groupsPath+"/"+mine["id"].(string), memberTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")
	h.req("DELETE", groupsPath+"/"+mine["id"].(string), memberTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")

	// Over the server_groups quota: Nova's 403.
	h.req("PUT", "/compute/v2.1/os-quota-sets/p-demo", adminTok, "", map[string]any{"quota_set": map[string]any{"server_groups": 1}}).expect(t, 200)
	h.req("POST", groupsPath, memberTok, "", body("third")).fault(t, 403, "forbidden", "Quota exceeded, too many server groups.")
}

func createServer(t *testing.T, h *harness, tok, version string, server map[string]any, extra map[string]any) *response {
	t.Helper()
	base := map[string]any{"name": "web", "imageRef": "cirros", "flavorRef": "1"}
	for k, v := range server {
		base[k] = v
	}
	body := map[string]any{"server": base}
	for k, v := range extra {
		body[k] = v
	}
	return h.req("POST", "/compute/v2.1/servers", tok, version, body)
}

func lastCreate(t *testing.T, h *harness) *structs.InstanceCreateRequest {
	t.Helper()
	args, _ := h.rpc.lastCall("Instance.Create").(*structs.InstanceCreateRequest)
	if args == nil {
		t.Fatal("no Instance.Create call")
	}
	return args
}

func TestServerCreateSchedulerHints(t *testing.T) {
	h := newHarness(t)
	host, _, _ := addHostAndServers(h)
	g := createGroup(t, h, memberTok, "", map[string]any{"server_group": map[string]any{"name": "g", "policies": []any{"anti-affinity"}}})
	theirs := createGroup(t, h, otherTok, "", map[string]any{"server_group": map[string]any{"name": "t", "policies": []any{"affinity"}}})
	gid := g["id"].(string)
	const other = "9d3c1a5e-0000-4000-8000-000000000001"

	r := createServer(t, h, memberTok, "", nil, map[string]any{"os:scheduler_hints": map[string]any{
		"group": gid, "same_host": other, "different_host": []any{other}, "query": "[\">=\",\"$free_ram_mb\",1024]", "foo": "ignored"}}).expect(t, 202)
	if got := lastCreate(t, h).Hints; got == nil || got.Group != gid || !reflect.DeepEqual(got.SameHost, []string{other}) || !reflect.DeepEqual(got.DifferentHost, []string{other}) ||
		!reflect.DeepEqual(got.Other, map[string][]string{"query": {`[">=","$free_ram_mb",1024]`}, "foo": {"ignored"}}) {
		t.Fatalf("hints %+v", got)
	}
	serverID := r.obj("server")["id"].(string)
	// The server is a member; 2.71 shows its group.
	members := h.req("GET", groupsPath+"/"+gid, memberTok, "", nil).obj("server_group")["members"]
	if !reflect.DeepEqual(members, []any{serverID}) {
		t.Fatalf("members %v", members)
	}
	if sg := h.req("GET", "/compute/v2.1/servers/"+serverID, memberTok, "2.71", nil).obj("server")["server_groups"]; !reflect.DeepEqual(sg, []any{gid}) {
		t.Fatalf("server_groups %v", sg)
	}
	// The older key works too; hints Stratus does not act on are kept
	// as Nova's request spec keeps them (lists of str()), for 2.100.
	createServer(t, h, memberTok, "", nil, map[string]any{"OS-SCH-HNT:scheduler_hints": map[string]any{"different_host": other}}).expect(t, 202)
	if got := lastCreate(t, h).Hints; got == nil || !reflect.DeepEqual(got.DifferentHost, []string{other}) {
		t.Fatalf("old key hints %+v", got)
	}
	createServer(t, h, memberTok, "", nil, map[string]any{"os:scheduler_hints": map[string]any{"build_near_host_ip": "10.0.0.1", "cidr": "/24",
		"query": map[string]any{"a": []any{1, true}}, "mine": []any{"x", 2}}}).expect(t, 202)
	if got := lastCreate(t, h).Hints; got.Honoured() || !reflect.DeepEqual(got.Other, map[string][]string{
		"build_near_host_ip": {"10.0.0.1"}, "cidr": {"/24"}, "query": {"{'a': [1, True]}"}, "mine": {"x", "2"}}) {
		t.Fatalf("kept hints %+v", got)
	}
	many := map[string]any{}
	for i := range structs.MaxOtherHints + 1 {
		many[fmt.Sprintf("h%d", i)] = "v"
	}
	createServer(t, h, memberTok, "", nil, map[string]any{"os:scheduler_hints": many}).fault(t, 400, "badRequest", "at most 32 scheduler hints")
	createServer(t, h, memberTok, "", nil, map[string]any{"os:scheduler_hints": map[string]any{"long": strings.Repeat("x", 256)}}).fault(t, 400, "badRequest", "at most 255 are kept")

	for _, tc := range []struct {
		hints map[string]any
		msg   string
	}{
		{map[string]any{"group": "not-a-uuid"}, "is not a 'uuid'"},
		{map[string]any{"group": other}, "Instance group " + other + " could not be found."},
		{map[string]any{"group": theirs["id"]}, "could not be found."},
		{map[string]any{"different_host": "x"}, "is not a 'uuid'"},
		{map[string]any{"different_host": []any{"x"}}, "is not a 'uuid'"},
		{map[string]any{"same_host": []any{"x"}}, "is not a 'uuid'"},
		{map[string]any{"same_host": 1}, "is not of type 'string', 'array'"},
		{map[string]any{"build_near_host_ip": "nope"}, "is not valid under any of the given schemas"},
	} {
		createServer(t, h, memberTok, "", nil, map[string]any{"os:scheduler_hints": tc.hints}).fault(t, 400, "badRequest", tc.msg)
	}

	// Admins may force a host: "az:host", "az::node", "az:host:node".
	for _, az := range []string{"az1:compute-1", "az1::compute-1", "az1:compute-1:compute-1", ":" + host.ID} {
		createServer(t, h, adminTok, "", map[string]any{"availability_zone": az}, nil).expect(t, 202)
		if args := lastCreate(t, h); args.TargetHost != host.ID || (az[0] != ':' && args.AZ != "az1") {
			t.Fatalf("%s: target %q zone %q", az, args.TargetHost, args.AZ)
		}
	}
	createServer(t, h, memberTok, "", map[string]any{"availability_zone": "az1:compute-1"}, nil).
		fault(t, 403, "forbidden", "os_compute_api:servers:create:forced_host")
	createServer(t, h, adminTok, "", map[string]any{"availability_zone": "az1:nohost"}, nil).
		fault(t, 400, "badRequest", "Compute host nohost could not be found.")
	createServer(t, h, adminTok, "", map[string]any{"availability_zone": "a:b:c:d"}, nil).
		fault(t, 400, "badRequest", "Unable to parse availability_zone")
	// 2.74's host and hypervisor_hostname.
	createServer(t, h, adminTok, "2.74", map[string]any{"host": "compute-1", "networks": "none"}, nil).expect(t, 202)
	if args := lastCreate(t, h); args.TargetHost != host.ID || args.AZ != "" {
		t.Fatalf("2.74 target %q", args.TargetHost)
	}
	createServer(t, h, adminTok, "2.74", map[string]any{"hypervisor_hostname": "compute-1", "networks": "none"}, nil).expect(t, 202)
	createServer(t, h, memberTok, "2.74", map[string]any{"host": "compute-1", "networks": "none"}, nil).
		fault(t, 403, "forbidden", "compute:servers:create:requested_destination")
	h.rpc.addHost(&structs.Host{ID: "h2", Name: "compute-2", Status: structs.HostStatusUp, Enabled: true})
	createServer(t, h, adminTok, "2.74", map[string]any{"host": "compute-1", "hypervisor_hostname": "compute-2", "networks": "none"}, nil).
		fault(t, 400, "badRequest", "Compute node compute-2 could not be found.")
	createServer(t, h, adminTok, "2.73", map[string]any{"host": "compute-1", "networks": "none"}, nil).
		fault(t, 400, "badRequest", "Additional properties are not allowed")

	// Quotas answer Nova's 403.
	h.req("PUT", "/compute/v2.1/os-quota-sets/p-demo", adminTok, "", map[string]any{"quota_set": map[string]any{"instances": 1, "force": true}}).expect(t, 200)
	createServer(t, h, memberTok, "", nil, nil).fault(t, 403, "forbidden", "Quota exceeded for instances")
}
