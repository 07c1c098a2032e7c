package nova

import (
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestFlavorShapesPerMicroversion(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ version, dir string }{{"2.1", ""}, {"2.55", "v2.55/"}, {"2.61", "v2.61/"}, {"2.75", "v2.75/"}} {
		r := h.req("GET", "/compute/v2.1/flavors/1", memberTok, tc.version, nil).expect(t, 200)
		want := sample(t, "flavors/"+tc.dir+"flavor-get-resp.json")
		sameShape(t, tc.version+" flavor", r.body, want)
		f := r.obj("flavor")
		if f["name"] != "m1.tiny" || f["ram"] != 512.0 || f["vcpus"] != 1.0 || f["disk"] != 1.0 || f["os-flavor-access:is_public"] != true {
			t.Fatalf("%s flavor %v", tc.version, f)
		}
		if !strings.Contains(string(r.raw), `"rxtx_factor":1.0`) {
			t.Fatalf("rxtx_factor is not rendered as Nova's float: %s", r.raw)
		}
	}
	// swap is "" before 2.75 and 0 from it.
	if r := h.req("GET", "/compute/v2.1/flavors/1", memberTok, "2.74", nil); r.obj("flavor")["swap"] != "" {
		t.Fatalf("2.74 swap %v", r.obj("flavor")["swap"])
	}

	r := h.req("GET", "/compute/v2.1/flavors", memberTok, "", nil).expect(t, 200)
	sameShape(t, "flavors", r.body, sample(t, "flavors/flavors-list-resp.json"))
	if len(r.list("flavors")) != 5 {
		t.Fatalf("flavors %v", r.list("flavors"))
	}
	r = h.req("GET", "/compute/v2.1/flavors", memberTok, "2.75", nil).expect(t, 200)
	sameShape(t, "flavors 2.75", r.body, sample(t, "flavors/v2.75/flavors-list-resp.json"))
	r = h.req("GET", "/compute/v2.1/flavors/detail", memberTok, "", nil).expect(t, 200)
	sameShape(t, "flavors detail", r.body, sample(t, "flavors/flavors-detail-resp.json"))

	h.req("GET", "/compute/v2.1/flavors/m1.tiny", memberTok, "", nil).fault(t, 404, "itemNotFound", "Flavor m1.tiny could not be found.")
}

func TestFlavorListFiltersSortAndPages(t *testing.T) {
	h := newHarness(t)
	names := func(r *response) []string {
		var out []string
		for _, f := range r.list("flavors") {
			out = append(out, f.(map[string]any)["name"].(string))
		}
		return out
	}
	r := h.req("GET", "/compute/v2.1/flavors/detail?minRam=4096&minDisk=50", memberTok, "", nil).expect(t, 200)
	if got := strings.Join(names(r), ","); got != "m1.large,m1.xlarge" {
		t.Fatalf("minRam/minDisk: %s", got)
	}
	h.req("GET", "/compute/v2.1/flavors?minRam=big", memberTok, "", nil).fault(t, 400, "badRequest", "Invalid minRam filter [big]")
	r = h.req("GET", "/compute/v2.1/flavors?sort_key=memory_mb&sort_dir=desc", memberTok, "", nil).expect(t, 200)
	if got := names(r); got[0] != "m1.xlarge" || got[4] != "m1.tiny" {
		t.Fatalf("sorted %v", got)
	}
	h.req("GET", "/compute/v2.1/flavors?sort_key=colour", memberTok, "", nil).fault(t, 400, "badRequest", "sort_key")

	r = h.req("GET", "/compute/v2.1/flavors?limit=2", memberTok, "", nil).expect(t, 200)
	if got := strings.Join(names(r), ","); got != "m1.tiny,m1.small" {
		t.Fatalf("page 1: %s", got)
	}
	next := r.list("flavors_links")[0].(map[string]any)
	if next["rel"] != "next" || next["href"] != h.srv.URL+"/compute/v2.1/flavors?limit=2&marker=2" {
		t.Fatalf("next link %v", next)
	}
	r = h.req("GET", "/compute/v2.1/flavors?limit=2&marker=4", memberTok, "", nil).expect(t, 200)
	if got := strings.Join(names(r), ","); got != "m1.xlarge" || r.body["flavors_links"] != nil {
		t.Fatalf("last page: %s %v", got, r.body["flavors_links"])
	}
	h.req("GET", "/compute/v2.1/flavors?marker=nope", memberTok, "", nil).fault(t, 400, "badRequest", "marker [nope] not found")
	h.req("GET", "/compute/v2.1/flavors?limit=-1", memberTok, "", nil).fault(t, 400, "badRequest", "limit")
	// Unknown query parameters are refused from 2.75 only.
	h.req("GET", "/compute/v2.1/flavors?colour=red", memberTok, "2.74", nil).expect(t, 200)
	h.req("GET", "/compute/v2.1/flavors?colour=red", memberTok, "2.75", nil).
		fault(t, 400, "badRequest", "Additional properties are not allowed ('colour' was unexpected)")
}

func TestFlavorVisibility(t *testing.T) {
	h := newHarness(t)
	h.rpc.flavors["9"] = &structs.Flavor{ID: "9", Name: "secret", VCPUs: 1, MemoryMB: 64, IsPublic: false}
	h.req("GET", "/compute/v2.1/flavors/9", memberTok, "", nil).fault(t, 404, "itemNotFound", "Flavor 9 could not be found.")
	h.req("GET", "/compute/v2.1/flavors/9", adminTok, "", nil).expect(t, 200)
	if n := len(h.req("GET", "/compute/v2.1/flavors", memberTok, "", nil).list("flavors")); n != 5 {
		t.Fatalf("member sees %d flavors", n)
	}
	// Admins see public flavors by default, as in Nova, and all with
	// is_public=none.
	if n := len(h.req("GET", "/compute/v2.1/flavors", adminTok, "", nil).list("flavors")); n != 5 {
		t.Fatalf("admin default sees %d flavors", n)
	}
	if n := len(h.req("GET", "/compute/v2.1/flavors?is_public=none", adminTok, "", nil).list("flavors")); n != 6 {
		t.Fatalf("admin is_public=none sees %d flavors", n)
	}
	r := h.req("GET", "/compute/v2.1/flavors?is_public=false", adminTok, "", nil)
	if l := r.list("flavors"); len(l) != 1 || l[0].(map[string]any)["id"] != "9" {
		t.Fatalf("is_public=false %v", l)
	}
	h.req("GET", "/compute/v2.1/flavors?is_public=maybe", adminTok, "", nil).fault(t, 400, "badRequest", "Invalid is_public filter [maybe]")
}

func TestFlavorManage(t *testing.T) {
	h := newHarness(t)
	req := sample(t, "flavor-manage/flavor-create-post-req.json")
	h.req("POST", "/compute/v2.1/flavors", memberTok, "", req).
		fault(t, 403, "forbidden", "Policy doesn't allow os_compute_api:os-flavor-manage:create to be performed.")
	r := h.req("POST", "/compute/v2.1/flavors", adminTok, "", req).expect(t, 200)
	sameShape(t, "created flavor", r.body, sample(t, "flavor-manage/flavor-create-post-resp.json"))
	f := h.rpc.flavors["10"]
	if f == nil || f.Name != "test_flavor" || f.MemoryMB != 1024 || f.VCPUs != 2 || f.RootGB != 10 || f.RxTxFactor != 2.0 || !f.IsPublic {
		t.Fatalf("stored flavor %+v", f)
	}
	h.req("POST", "/compute/v2.1/flavors", adminTok, "", req).fault(t, 409, "conflictingRequest", "already exists")

	h.req("POST", "/compute/v2.1/flavors", adminTok, "2.75", sample(t, "flavor-manage/v2.75/flavor-create-post-req.json")).
		fault(t, 409, "conflictingRequest", "already exists")
	req75 := sample(t, "flavor-manage/v2.75/flavor-create-post-req.json")
	req75["flavor"].(map[string]any)["id"] = nil
	req75["flavor"].(map[string]any)["name"] = "described"
	r = h.req("POST", "/compute/v2.1/flavors", adminTok, "2.75", req75).expect(t, 200)
	sameShape(t, "created flavor 2.75", r.body, sample(t, "flavor-manage/v2.75/flavor-create-post-resp.json"))
	if id := r.obj("flavor")["id"].(string); checkUUID(id) != "" || r.obj("flavor")["description"] != "test description" {
		t.Fatalf("generated id %q / description %v", id, r.obj("flavor")["description"])
	}

	// Nova's flavor-manage body: strings for numbers, "" swap, is_public.
	h.req("POST", "/compute/v2.1/flavors", adminTok, "", map[string]any{"flavor": map[string]any{
		"name": "strs", "ram": "256", "vcpus": "2", "disk": "0", "id": 77, "swap": "",
		"OS-FLV-EXT-DATA:ephemeral": 5, "os-flavor-access:is_public": "false", "rxtx_factor": "1.5"}}).expect(t, 200)
	if f := h.rpc.flavors["77"]; f == nil || f.MemoryMB != 256 || f.SwapMB != 0 || f.EphemeralGB != 5 || f.IsPublic || f.RxTxFactor != 1.5 {
		t.Fatalf("stored %+v", f)
	}
	for _, bad := range []map[string]any{
		{"name": "x", "ram": 0, "vcpus": 1, "disk": 1},
		{"name": "x", "ram": 1, "vcpus": 1},
		{"name": "x", "ram": 1, "vcpus": 1, "disk": 1, "rxtx_factor": 0},
		{"name": "x", "ram": 1, "vcpus": 1, "disk": 1, "id": " lead"},
		{"name": "x", "ram": 1, "vcpus": 1, "disk": 1, "description": "too early"},
	} {
		h.req("POST", "/compute/v2.1/flavors", adminTok, "", map[string]any{"flavor": bad}).expect(t, 400)
	}

	r = h.req("PUT", "/compute/v2.1/flavors/1", adminTok, "2.55", map[string]any{"flavor": map[string]any{"description": "updated"}}).expect(t, 200)
	if r.obj("flavor")["description"] != "updated" || h.rpc.flavors["1"].Description != "updated" {
		t.Fatalf("update %s", r.raw)
	}
	h.req("DELETE", "/compute/v2.1/flavors/10", memberTok, "", nil).fault(t, 403, "forbidden", "os-flavor-manage:delete")
	h.req("DELETE", "/compute/v2.1/flavors/10", adminTok, "", nil).expect(t, 202)
	h.req("DELETE", "/compute/v2.1/flavors/10", adminTok, "", nil).fault(t, 404, "itemNotFound", "Flavor 10 could not be found.")
}

func TestFlavorExtraSpecs(t *testing.T) {
	h := newHarness(t)
	base := "/compute/v2.1/flavors/1/os-extra_specs"
	r := h.req("GET", base, memberTok, "", nil).expect(t, 200)
	if len(r.obj("extra_specs")) != 0 {
		t.Fatalf("initial specs %s", r.raw)
	}
	create := sample(t, "flavor-extra-specs/flavor-extra-specs-create-req.json")
	h.req("POST", base, memberTok, "", create).fault(t, 403, "forbidden", "os-flavor-extra-specs:create")
	r = h.req("POST", base, adminTok, "", create).expect(t, 200)
	sameShape(t, "created specs", r.body, sample(t, "flavor-extra-specs/flavor-extra-specs-create-resp.json"))
	r = h.req("GET", base+"/hw:numa_nodes", memberTok, "", nil).expect(t, 200)
	if r.body["hw:numa_nodes"] != "1" || len(r.body) != 1 {
		t.Fatalf("show %s", r.raw)
	}
	r = h.req("PUT", base+"/hw:numa_nodes", adminTok, "", map[string]any{"hw:numa_nodes": 2}).expect(t, 200)
	if r.body["hw:numa_nodes"] != "2" || h.rpc.flavors["1"].ExtraSpecs["hw:numa_nodes"] != "2" {
		t.Fatalf("update %s %v", r.raw, h.rpc.flavors["1"].ExtraSpecs)
	}
	h.req("PUT", base+"/hw:numa_nodes", adminTok, "", map[string]any{"other": "2"}).fault(t, 400, "badRequest", "Request body and URI mismatch")
	h.req("PUT", base+"/hw:numa_nodes", adminTok, "", map[string]any{"hw:numa_nodes": "2", "b": "1"}).
		fault(t, 400, "badRequest", "Request body contains too many items")
	h.req("POST", base, adminTok, "", map[string]any{"extra_specs": map[string]any{"bad/key": "1"}}).fault(t, 400, "badRequest", "Additional properties")
	// From 2.86 the specs the scheduler reads are validated.
	h.req("POST", base, adminTok, "2.86", map[string]any{"extra_specs": map[string]any{"resources:VCPU": "many"}}).
		fault(t, 400, "badRequest", "Validation failed")
	h.req("POST", base, adminTok, "2.85", map[string]any{"extra_specs": map[string]any{"trait:HW_CPU_X86_AVX": "required"}}).expect(t, 200)

	r = h.req("GET", "/compute/v2.1/flavors/1", memberTok, "2.61", nil).expect(t, 200)
	if specs := r.obj("flavor", "extra_specs"); specs["hw:cpu_policy"] != "shared" {
		t.Fatalf("2.61 flavor extra specs %v", specs)
	}
	h.req("DELETE", base+"/hw:cpu_policy", adminTok, "", nil).expect(t, 200)
	h.req("DELETE", base+"/hw:cpu_policy", adminTok, "", nil).fault(t, 404, "itemNotFound", "Flavor 1 has no extra specs with key hw:cpu_policy.")
	h.req("GET", "/compute/v2.1/flavors/99/os-extra_specs", memberTok, "", nil).fault(t, 404, "itemNotFound", "Flavor 99 could not be found.")
}
