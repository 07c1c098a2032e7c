package nova

import (
	"reflect"
	"sort"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestNetworkProxiesShowNeutronNetworksAsNova(t *testing.T) {
	h, s := newRealHarness(t)
	public := publicNetwork(t, s)
	private := makePrivate(t, s, public)
	mine := netMake(t, s, &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Caller: structs.NetCaller{ProjectID: "p-demo"},
		Network: &structs.Network{Name: "mine", AdminStateUp: true}}).Networks[0]
	theirs := netMake(t, s, &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Caller: structs.NetCaller{ProjectID: "p-other"},
		Network: &structs.Network{Name: "theirs", AdminStateUp: true}}).Networks[0]
	labels := func(l []any) map[string]string {
		out := map[string]string{}
		for _, raw := range l {
			n := raw.(map[string]any)
			out[n["id"].(string)] = n["label"].(string)
		}
		return out
	}

	// os-networks: admins see every network and nova-network's admin
	// fields, all null but id and label.
	r := h.req("GET", "/compute/v2.1/os-networks", adminTok, "", nil).expect(t, 200)
	sameShape(t, "networks", r.body, sample(t, "os-networks/networks-list-resp.json"))
	want := map[string]string{public.ID: "public", private.ID: "private", mine.ID: "mine", theirs.ID: "theirs"}
	if got := labels(r.list("networks")); !reflect.DeepEqual(got, want) {
		t.Fatalf("admin networks %v, want %v", got, want)
	}
	for _, raw := range r.list("networks") {
		for k, v := range raw.(map[string]any) {
			if k != "id" && k != "label" && v != nil {
				t.Fatalf("%s = %v, want null", k, v)
			}
		}
	}
	// Members see what Neutron shows them, with the eleven public fields.
	r = h.req("GET", "/compute/v2.1/os-networks", memberTok, "2.35", nil).expect(t, 200)
	delete(want, theirs.ID)
	if got := labels(r.list("networks")); !reflect.DeepEqual(got, want) {
		t.Fatalf("member networks %v, want %v", got, want)
	}
	got := keys(r.list("networks")[0].(map[string]any))
	wantKeys := append([]string(nil), novaNetworkFields...)
	sort.Strings(wantKeys)
	if !reflect.DeepEqual(got, wantKeys) {
		t.Fatalf("member view keys %v, want %v", got, wantKeys)
	}
	r = h.req("GET", "/compute/v2.1/os-networks/"+private.ID, adminTok, "", nil).expect(t, 200)
	sameShape(t, "network", r.body, sample(t, "os-networks/network-show-resp.json"))
	if n := r.obj("network"); n["id"] != private.ID || n["label"] != "private" {
		t.Fatalf("show %v", n)
	}
	h.req("GET", "/compute/v2.1/os-networks/"+theirs.ID, memberTok, "", nil).fault(t, 404, "itemNotFound", "Network not found")
	h.req("GET", "/compute/v2.1/os-networks/nope", memberTok, "", nil).fault(t, 404, "itemNotFound", "Network not found")
	h.req("GET", "/compute/v2.1/os-networks", noRoleTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-networks:list")

	// os-tenant-networks: id, label and the string "None" as cidr.
	r = h.req("GET", "/compute/v2.1/os-tenant-networks", memberTok, "", nil).expect(t, 200)
	sameShape(t, "tenant networks", r.body, sample(t, "os-tenant-networks/networks-list-res.json"))
	if got := labels(r.list("networks")); !reflect.DeepEqual(got, want) {
		t.Fatalf("tenant networks %v, want %v", got, want)
	}
	r = h.req("GET", "/compute/v2.1/os-tenant-networks/"+mine.ID, memberTok, "", nil).expect(t, 200)
	if n := r.obj("network"); !reflect.DeepEqual(n, map[string]any{"id": mine.ID, "label": "mine", "cidr": "None"}) {
		t.Fatalf("tenant network %v", n)
	}
	h.req("GET", "/compute/v2.1/os-tenant-networks/"+theirs.ID, memberTok, "", nil).fault(t, 404, "itemNotFound", "Network not found")
	h.req("GET", "/compute/v2.1/os-tenant-networks", noRoleTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-tenant-networks:list")

	// Gone from 2.36.
	for _, p := range []string{"os-networks", "os-networks/" + mine.ID, "os-tenant-networks", "os-tenant-networks/" + mine.ID} {
		h.req("GET", "/compute/v2.1/"+p, adminTok, "2.36", nil).fault(t, 404, "itemNotFound", msgNotFound)
	}
}

// TestNovaNetworkCallsAreGone: the nova-network calls answer 410 at
// every microversion, for any caller, as Nova's removed handlers.
func TestNovaNetworkCallsAreGone(t *testing.T) {
	h := newHarness(t)
	for _, version := range []string{"2.1", "2.35", "2.36", "2.96"} {
		for _, tc := range []struct {
			method, path string
			body         any
		}{
			{"POST", "/os-networks", sample(t, "os-networks/network-create-req.json")},
			{"POST", "/os-networks", nil},
			{"POST", "/os-networks/add", sample(t, "os-networks/network-add-req.json")},
			{"DELETE", "/os-networks/1", nil},
			{"POST", "/os-networks/1/action", map[string]any{"disassociate": nil}},
			{"POST", "/os-networks/1/action", map[string]any{"disassociate_host": nil}},
			{"POST", "/os-networks/1/action", map[string]any{"disassociate_project": nil}},
			{"POST", "/os-networks/1/action", map[string]any{"associate_host": "testHost"}},
			{"POST", "/os-tenant-networks", sample(t, "os-tenant-networks/networks-post-req.json")},
			{"DELETE", "/os-tenant-networks/1", nil},
		} {
			for _, tok := range []string{memberTok, noRoleTok} {
				h.req(tc.method, "/compute/v2.1"+tc.path, tok, version, tc.body).fault(t, 410, "computeFault", msgGone)
			}
		}
	}
	h.req("POST", "/compute/v2.1/os-networks/1/action", memberTok, "", map[string]any{"fly": nil}).
		fault(t, 400, "badRequest", "There is no such action: fly")
	h.req("POST", "/compute/v2.1/os-networks/1/action", memberTok, "", map[string]any{"disassociate": nil, "associate_host": "x"}).
		fault(t, 400, "badRequest", "Malformed request body")
	h.req("POST", "/compute/v2.1/os-networks", memberTok, "", "{").fault(t, 400, "badRequest", "Malformed request body")
	h.req("DELETE", "/compute/v2.1/os-networks/1", "", "", nil).expect(t, 401)
}
