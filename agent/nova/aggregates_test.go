package nova

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

const aggPath = "/compute/v2.1/os-aggregates"

func TestAggregatesShapesPerMicroversion(t *testing.T) {
	for _, tc := range []struct{ version, dir string }{{"2.1", ""}, {"2.41", "v2.41/"}} {
		h := newHarness(t)
		addHostAndServers(h)
		h.rpc.addHost(&structs.Host{ID: "h-compute", Name: "compute", Status: structs.HostStatusUp, Enabled: true})
		p := "os-aggregates/" + tc.dir
		r := h.req("POST", aggPath, adminTok, tc.version, sample(t, p+"aggregate-post-req.json")).expect(t, 200)
		sameShape(t, tc.version+" create", r.body, sample(t, p+"aggregate-post-resp.json"))
		id := fmt.Sprint(r.obj("aggregate")["id"])
		path := aggPath + "/" + id
		r = h.req("GET", path, adminTok, tc.version, nil).expect(t, 200)
		sameShape(t, tc.version+" show", r.body, sample(t, p+"aggregates-get-resp.json"))
		addReq := map[string]any{"add_host": map[string]any{"host": "compute"}}
		r = h.req("POST", path+"/action", adminTok, tc.version, addReq).expect(t, 200)
		sameShape(t, tc.version+" add host", r.body, sample(t, p+"aggregates-add-host-post-resp.json"))
		if hosts := r.obj("aggregate")["hosts"]; !reflect.DeepEqual(hosts, []any{"compute"}) {
			t.Fatalf("hosts %v", hosts)
		}
		r = h.req("GET", aggPath, adminTok, tc.version, nil).expect(t, 200)
		sameShape(t, tc.version+" list", r.body, sample(t, p+"aggregates-list-get-resp.json"))
		r = h.req("POST", path+"/action", adminTok, tc.version, sample(t, p+"aggregate-metadata-post-req.json")).expect(t, 200)
		sameShape(t, tc.version+" metadata", r.body, sample(t, p+"aggregates-metadata-post-resp.json"))
		r = h.req("POST", path+"/action", adminTok, tc.version, map[string]any{"remove_host": map[string]any{"host": "compute"}}).expect(t, 200)
		sameShape(t, tc.version+" remove host", r.body, sample(t, p+"aggregates-remove-host-post-resp.json"))
		r = h.req("PUT", path, adminTok, tc.version, sample(t, p+"aggregate-update-post-req.json")).expect(t, 200)
		sameShape(t, tc.version+" update", r.body, sample(t, p+"aggregate-update-post-resp.json"))
		if ag := r.obj("aggregate"); ag["name"] != "newname" || ag["availability_zone"] != "nova2" || ag["updated_at"] == nil {
			t.Fatalf("updated %v", ag)
		}
		if _, ok := r.obj("aggregate")["uuid"]; ok != (tc.version == "2.41") {
			t.Fatalf("uuid at %s: %v", tc.version, ok)
		}
	}
}

func TestAggregateActionsAndErrors(t *testing.T) {
	h := newHarness(t)
	addHostAndServers(h)
	// Admin only, the action's own rule named.
	h.req("GET", aggPath, memberTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-aggregates:index")
	h.req("POST", aggPath, memberTok, "", map[string]any{"aggregate": map[string]any{"name": "x"}}).
		fault(t, 403, "forbidden", "os_compute_api:os-aggregates:create")
	h.req("POST", aggPath+"/1/action", memberTok, "", map[string]any{"remove_host": map[string]any{"host": "x"}}).
		fault(t, 403, "forbidden", "os_compute_api:os-aggregates:remove_host")

	r := h.req("POST", aggPath, adminTok, "", map[string]any{"aggregate": map[string]any{"name": "rack", "availability_zone": nil}}).expect(t, 200)
	ag := r.obj("aggregate")
	if ag["availability_zone"] != nil || ag["hosts"] != nil || ag["metadata"] != nil {
		t.Fatalf("created %v", ag)
	}
	path := aggPath + "/" + fmt.Sprint(ag["id"])
	action := func(tok string, body any) *response { return h.req("POST", path+"/action", tok, "", body) }
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		msg          string
	}{
		{"POST", aggPath, map[string]any{"aggregate": map[string]any{"name": "rack"}}, 409, "Aggregate rack already exists."},
		{"POST", aggPath, map[string]any{"aggregate": map[string]any{}}, 400, "'name' is a required property"},
		{"POST", aggPath, map[string]any{"aggregate": map[string]any{"name": "x", "availability_zone": "a:b"}}, 400, "must not contain ':'"},
		{"POST", aggPath, map[string]any{"aggregate": map[string]any{"name": "x", "hosts": []any{}}}, 400, "Additional properties are not allowed"},
		{"POST", aggPath, "[", 400, "Malformed request body"},
		{"GET", aggPath + "/abc", nil, 400, "Invalid input received: id must be an integer"},
		{"GET", aggPath + "/999", nil, 404, "Aggregate 999 could not be found."},
		{"PUT", path, map[string]any{"aggregate": map[string]any{}}, 400, "is not valid under any of the given schemas"},
		{"PUT", path, map[string]any{"aggregate": map[string]any{"availability_zone": nil}}, 400, "does not support empty named availability zone"},
		{"PUT", aggPath + "/999", map[string]any{"aggregate": map[string]any{"name": "y"}}, 404, "Aggregate 999 could not be found."},
		{"DELETE", aggPath + "/999", nil, 404, "Aggregate 999 could not be found."},
		{"POST", path + "/action", map[string]any{"add_host": map[string]any{"host": "nope"}}, 404, "Compute host nope could not be found."},
		{"POST", path + "/action", map[string]any{"add_host": map[string]any{}}, 400, "'host' is a required property"},
		{"POST", path + "/action", map[string]any{"add_host": map[string]any{"host": "a"}, "remove_host": map[string]any{"host": "a"}}, 400, "Malformed request body"},
		{"POST", path + "/action", map[string]any{"paint": map[string]any{}}, 400, "There is no such action: paint"},
		{"POST", path + "/action", map[string]any{"remove_host": map[string]any{"host": "compute-1"}}, 404, "Cannot remove host compute-1 in aggregate " + fmt.Sprint(ag["id"])},
		{"POST", path + "/action", map[string]any{"set_metadata": map[string]any{"metadata": map[string]any{"k": 1}}}, 400, "is not of type 'string', 'null'"},
		{"POST", aggPath + "/999/action", map[string]any{"set_metadata": map[string]any{"metadata": map[string]any{}}}, 404, "Aggregate 999 could not be found."},
	} {
		r := h.req(tc.method, tc.path, adminTok, "", tc.body)
		r.fault(t, tc.status, faultNames[tc.status], tc.msg)
	}

	// Hosts by name; metadata merges and null deletes.
	action(adminTok, map[string]any{"add_host": map[string]any{"host": "compute-1"}}).expect(t, 200)
	action(adminTok, map[string]any{"add_host": map[string]any{"host": "compute-1"}}).fault(t, 409, "conflictingRequest", "already has host compute-1")
	action(adminTok, map[string]any{"set_metadata": map[string]any{"metadata": map[string]any{"ssd": "true", "gpu": "a100"}}}).expect(t, 200)
	r = action(adminTok, map[string]any{"set_metadata": map[string]any{"metadata": map[string]any{"gpu": nil, "availability_zone": "london"}}}).expect(t, 200)
	if md := r.obj("aggregate")["metadata"]; !reflect.DeepEqual(md, map[string]any{"ssd": "true", "availability_zone": "london"}) {
		t.Fatalf("metadata %v", md)
	}
	if got, _ := h.rpc.lastCall("Aggregate.SetMetadata").(*structs.AggregateMetadataRequest); got == nil || !reflect.DeepEqual(got.Delete, []string{"gpu"}) {
		t.Fatalf("SetMetadata %+v", got)
	}
	// The host is now in zone london, for every API that shows zones.
	zones := h.req("GET", "/compute/v2.1/os-availability-zone", memberTok, "", nil).list("availabilityZoneInfo")
	if len(zones) != 1 || zones[0].(map[string]any)["zoneName"] != "london" {
		t.Fatalf("zones %v", zones)
	}
	svc := h.req("GET", "/compute/v2.1/os-services?binary=nova-compute", adminTok, "", nil).list("services")[0].(map[string]any)
	if svc["zone"] != "london" {
		t.Fatalf("service zone %v", svc["zone"])
	}
	for _, path := range []string{"/compute/v2.1/servers/detail", "/compute/v2.1/servers/" + firstServer(t, h)} {
		r := h.req("GET", path, memberTok, "", nil).expect(t, 200)
		srv := r.obj("server")
		if srv == nil {
			srv = r.list("servers")[0].(map[string]any)
		}
		if srv["OS-EXT-AZ:availability_zone"] != "london" {
			t.Fatalf("%s: zone %v", path, srv["OS-EXT-AZ:availability_zone"])
		}
	}

	h.req("DELETE", path, adminTok, "", nil).fault(t, 400, "badRequest", "Host aggregate is not empty")
	action(adminTok, map[string]any{"remove_host": map[string]any{"host": "compute-1"}}).expect(t, 200)
	r = h.req("DELETE", path, adminTok, "", nil).expect(t, 200)
	if len(r.raw) != 0 {
		t.Fatalf("delete body %s", r.raw)
	}
	// The body is validated first (issue7b_test.go drives the rest).
	h.req("POST", aggPath+"/1/images", adminTok, "2.81", map[string]any{"cache": []any{}}).fault(t, 400, "badRequest", "is too short")
	h.req("POST", aggPath+"/1/images", adminTok, "2.80", map[string]any{"cache": []any{}}).expect(t, 404)
}

func firstServer(t *testing.T, h *harness) string {
	t.Helper()
	for id, inst := range h.rpc.instances {
		if inst.ProjectID == "p-demo" {
			return id
		}
	}
	t.Fatal("no server")
	return ""
}

func TestAvailabilityZonesFromAggregates(t *testing.T) {
	h := newHarness(t)
	addHostAndServers(h) // compute-1, agent zone az1
	h.rpc.addHost(&structs.Host{ID: "h2", Name: "compute-2", Status: structs.HostStatusUp, Enabled: true})
	h.rpc.addHost(&structs.Host{ID: "h3", Name: "compute-3", AZ: "az1", Status: structs.HostStatusUp, Enabled: true})
	zoneHostsOf := func() map[string][]string {
		r := h.req("GET", "/compute/v2.1/os-availability-zone/detail", adminTok, "", nil).expect(t, 200)
		out := map[string][]string{}
		for _, z := range r.list("availabilityZoneInfo") {
			z := z.(map[string]any)
			for name := range z["hosts"].(map[string]any) {
				out[z["zoneName"].(string)] = append(out[z["zoneName"].(string)], name)
			}
		}
		return out
	}
	// Without aggregates: the agents' zones, the default for none.
	if got := zoneHostsOf(); len(got["az1"]) != 2 || !reflect.DeepEqual(got["nova"], []string{"compute-2"}) {
		t.Fatalf("zones %v", got)
	}
	r := h.req("POST", aggPath, adminTok, "", map[string]any{"aggregate": map[string]any{"name": "paris-1", "availability_zone": "paris"}}).expect(t, 200)
	path := aggPath + "/" + fmt.Sprint(r.obj("aggregate")["id"])
	for _, host := range []string{"compute-2", "h3"} {
		h.req("POST", path+"/action", adminTok, "", map[string]any{"add_host": map[string]any{"host": host}}).expect(t, 200)
	}
	got := zoneHostsOf()
	if !reflect.DeepEqual(got["az1"], []string{"compute-1"}) || len(got["paris"]) != 2 || got["nova"] != nil {
		t.Fatalf("zones with an aggregate %v", got)
	}
	// A second zone's aggregate cannot take a host of the first.
	r = h.req("POST", aggPath, adminTok, "", map[string]any{"aggregate": map[string]any{"name": "rome-1", "availability_zone": "rome"}}).expect(t, 200)
	h.req("POST", aggPath+"/"+fmt.Sprint(r.obj("aggregate")["id"])+"/action", adminTok, "", map[string]any{"add_host": map[string]any{"host": "compute-2"}}).
		fault(t, 409, "conflictingRequest", "One or more hosts already in availability zone(s) ['paris']")
}
