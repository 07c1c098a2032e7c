package nova

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestAccessIPsAgainstARealServer: accessIPv4/accessIPv6 are validated
// as Nova's (format → 400), stored on create, update and rebuild, and
// shown ("" when unset).
func TestAccessIPsAgainstARealServer(t *testing.T) {
	h, _ := newRealHarness(t, "hv-1")
	boot(h, memberTok, "", map[string]any{"accessIPv4": "1.2.3"}).fault(t, 400, "badRequest", "is not a 'ipv4'")
	boot(h, memberTok, "", map[string]any{"accessIPv6": "10.0.0.1"}).fault(t, 400, "badRequest", "is not a 'ipv6'")

	r := boot(h, memberTok, "", map[string]any{"accessIPv4": "203.0.113.10", "accessIPv6": "2001:db8::10"}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	plain := boot(h, memberTok, "", nil).expect(t, 202).obj("server")["id"].(string)
	s := waitServer(h, id, "ACTIVE")
	if s["accessIPv4"] != "203.0.113.10" || s["accessIPv6"] != "2001:db8::10" {
		t.Fatalf("created server's access IPs %v %v", s["accessIPv4"], s["accessIPv6"])
	}
	if s := waitServer(h, plain, "ACTIVE"); s["accessIPv4"] != "" || s["accessIPv6"] != "" {
		t.Fatalf("unset access IPs %v %v", s["accessIPv4"], s["accessIPv6"])
	}
	list := h.req("GET", "/compute/v2.1/servers/detail", memberTok, "", nil).expect(t, 200)
	found := false
	for _, e := range list.list("servers") {
		if m := e.(map[string]any); m["id"] == id {
			found = m["accessIPv4"] == "203.0.113.10"
		}
	}
	if !found {
		t.Fatalf("detail list misses the access IP: %s", list.raw)
	}

	// Admins filter on them.
	for filter, want := range map[string]int{"access_ip_v4=203.0.113.10": 1, "access_ip_v6=2001:db8::": 1, "access_ip_v4=192.0.2.": 0} {
		r := h.req("GET", "/compute/v2.1/servers?all_tenants=1&"+filter, adminTok, "", nil).expect(t, 200)
		if got := r.list("servers"); len(got) != want || (want == 1 && got[0].(map[string]any)["id"] != id) {
			t.Fatalf("%s: %s", filter, r.raw)
		}
	}

	// Update: one changes, the other stays; a bad one changes nothing.
	path := "/compute/v2.1/servers/" + id
	r = h.req("PUT", path, memberTok, "", map[string]any{"server": map[string]any{"accessIPv4": "198.51.100.1"}}).expect(t, 200)
	if got := r.obj("server"); got["accessIPv4"] != "198.51.100.1" || got["accessIPv6"] != "2001:db8::10" {
		t.Fatalf("updated %v %v", got["accessIPv4"], got["accessIPv6"])
	}
	h.req("PUT", path, memberTok, "", map[string]any{"server": map[string]any{"accessIPv6": "zz::1::2"}}).
		fault(t, 400, "badRequest", "is not a 'ipv6'")
	h.req("PUT", path, otherTok, "", map[string]any{"server": map[string]any{"accessIPv4": "198.51.100.2"}}).
		fault(t, 404, "itemNotFound", "could not be found")
	if got := h.req("GET", path, memberTok, "", nil).obj("server"); got["accessIPv4"] != "198.51.100.1" || got["accessIPv6"] != "2001:db8::10" {
		t.Fatalf("after refused updates %v %v", got["accessIPv4"], got["accessIPv6"])
	}

	// Rebuild records them too.
	r = h.req("POST", path+"/action", memberTok, "", map[string]any{"rebuild": map[string]any{"imageRef": "cirros",
		"accessIPv4": "192.0.2.5", "accessIPv6": "2001:db8::5"}}).expect(t, 202)
	if got := r.obj("server"); got["accessIPv4"] != "192.0.2.5" || got["accessIPv6"] != "2001:db8::5" {
		t.Fatalf("rebuild answer %v %v", got["accessIPv4"], got["accessIPv6"])
	}
	h.req("POST", path+"/action", memberTok, "", map[string]any{"rebuild": map[string]any{"imageRef": "cirros", "accessIPv4": "::1"}}).
		fault(t, 400, "badRequest", "is not a 'ipv4'")
	if s := waitServer(h, id, "ACTIVE"); s["accessIPv4"] != "192.0.2.5" || s["accessIPv6"] != "2001:db8::5" {
		t.Fatalf("rebuilt %v %v", s["accessIPv4"], s["accessIPv6"])
	}
}

// TestFixedIPActionsAgainstARealServer: addFixedIp attaches a port on
// the network, removeFixedIp detaches the port holding the address;
// both are gone from 2.44.
func TestFixedIPActionsAgainstARealServer(t *testing.T) {
	h, s := newRealHarness(t, "hv-1")
	private := makePrivate(t, s, publicNetwork(t, s))
	r := boot(h, memberTok, "", nil).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	action := func(token, version string, body map[string]any) *response {
		return h.req("POST", "/compute/v2.1/servers/"+id+"/action", token, version, body)
	}
	if got := addrs(h, memberTok, id, "private"); fmt.Sprint(got) != "[fixed:10.0.0.2]" {
		t.Fatalf("addresses %v", got)
	}

	// Validation, policy and microversion first.
	action(memberTok, "", map[string]any{"addFixedIp": map[string]any{}}).fault(t, 400, "badRequest", "'networkId' is a required property")
	action(memberTok, "", map[string]any{"addFixedIp": map[string]any{"networkId": private.ID, "x": 1}}).fault(t, 400, "badRequest", "Additional properties")
	action(memberTok, "", map[string]any{"removeFixedIp": map[string]any{"address": "10.0.0"}}).fault(t, 400, "badRequest", "Invalid input")
	action(memberTok, "2.44", map[string]any{"addFixedIp": map[string]any{"networkId": private.ID}}).fault(t, 404, "itemNotFound", "could not be found")
	action(memberTok, "2.44", map[string]any{"removeFixedIp": map[string]any{"address": "10.0.0.2"}}).fault(t, 404, "itemNotFound", "could not be found")
	action(otherTok, "", map[string]any{"addFixedIp": map[string]any{"networkId": private.ID}}).fault(t, 404, "itemNotFound", "could not be found")
	action(readerTok, "", map[string]any{"addFixedIp": map[string]any{"networkId": private.ID}}).fault(t, 403, "forbidden", "os-multinic:add")
	action(memberTok, "", map[string]any{"addFixedIp": map[string]any{"networkId": "00000000-0000-0000-0000-00000000dead"}}).
		fault(t, 404, "itemNotFound", "could not be found")

	action(memberTok, "2.43", map[string]any{"addFixedIp": map[string]any{"networkId": private.ID}}).expect(t, 202)
	waitFor(t, "the second address", func() error {
		if got := addrs(h, memberTok, id, "private"); fmt.Sprint(got) != "[fixed:10.0.0.2 fixed:10.0.0.3]" {
			return fmt.Errorf("addresses %v", got)
		}
		return nil
	})
	action(memberTok, "", map[string]any{"removeFixedIp": map[string]any{"address": "10.0.0.99"}}).
		fault(t, 400, "badRequest", "does not have fixed IP '10.0.0.99'")
	action(memberTok, "", map[string]any{"removeFixedIp": map[string]any{"address": "10.0.0.2"}}).expect(t, 202)
	waitFor(t, "the first address gone", func() error {
		if got := addrs(h, memberTok, id, "private"); fmt.Sprint(got) != "[fixed:10.0.0.3]" {
			return fmt.Errorf("addresses %v", got)
		}
		return nil
	})
	if ports := devicePorts(t, s, id); len(ports) != 1 {
		t.Fatalf("%d ports left", len(ports))
	}
}

// TestPerUserQuotasAgainstARealServer: os-quota-sets with user_id
// reads, sets and drops a user's limits; the servers enforce them at
// boot; members may read but not write them.
func TestPerUserQuotasAgainstARealServer(t *testing.T) {
	h, _ := newRealHarness(t, "hv-1")
	base := "/compute/v2.1/os-quota-sets/p-demo"
	user := base + "?user_id=u-alice"

	r := h.req("GET", user, memberTok, "", nil).expect(t, 200)
	if got := r.obj("quota_set"); got["id"] != "p-demo" || got["instances"] != float64(10) || got["fixed_ips"] != float64(-1) {
		t.Fatalf("default user quotas %s", r.raw)
	}
	h.req("PUT", user, memberTok, "", map[string]any{"quota_set": map[string]any{"instances": 1}}).fault(t, 403, "forbidden", "os-quota-sets:update")
	h.req("DELETE", user, memberTok, "", nil).fault(t, 403, "forbidden", "os-quota-sets:delete")
	h.req("GET", "/compute/v2.1/os-quota-sets/p-other?user_id=u-bob", memberTok, "", nil).fault(t, 403, "forbidden", "os-quota-sets:show")
	h.req("PUT", user, adminTok, "", map[string]any{"quota_set": map[string]any{"instances": "x"}}).fault(t, 400, "badRequest", "Invalid input")
	// Above what the project leaves the user: 400 unless forced.
	h.req("PUT", user, adminTok, "", map[string]any{"quota_set": map[string]any{"cores": 21}}).
		fault(t, 400, "badRequest", "Quota limit 21 for cores must be less than or equal to 20.")

	r = h.req("PUT", user, adminTok, "2.36", map[string]any{"quota_set": map[string]any{"instances": 1, "key_pairs": 5}}).expect(t, 200)
	if got := r.obj("quota_set"); got["instances"] != float64(1) || got["key_pairs"] != float64(5) || got["id"] != nil || got["fixed_ips"] != nil {
		t.Fatalf("update answer %s", r.raw)
	}
	if got := h.req("GET", user, memberTok, "", nil).obj("quota_set"); got["instances"] != float64(1) || got["cores"] != float64(20) {
		t.Fatalf("user quotas %v", got)
	}
	if got := h.req("GET", base, memberTok, "", nil).obj("quota_set"); got["instances"] != float64(10) {
		t.Fatalf("the project's limits changed: %v", got)
	}

	// The user's limit applies to the user's boots only.
	id := boot(h, memberTok, "", nil).expect(t, 202).obj("server")["id"].(string)
	boot(h, memberTok, "", nil).fault(t, 403, "forbidden", "Quota exceeded for instances: Requested 1, but already used 1 of 1 instances")
	boot(h, readerTok, "", nil).expect(t, 403)
	r = h.req("GET", base+"/detail?user_id=u-alice", memberTok, "", nil).expect(t, 200)
	if got := r.obj("quota_set", "instances"); got["in_use"] != float64(1) || got["limit"] != float64(1) || got["reserved"] != float64(0) {
		t.Fatalf("user detail %s", r.raw)
	}
	// Lowering below what the user uses is refused unless forced.
	h.req("PUT", user, adminTok, "", map[string]any{"quota_set": map[string]any{"instances": 0}}).
		fault(t, 400, "badRequest", "must be greater than or equal to already used and reserved 1")
	h.req("PUT", user, adminTok, "", map[string]any{"quota_set": map[string]any{"instances": 0, "force": true}}).expect(t, 200)

	h.req("DELETE", user, adminTok, "", nil).expect(t, 202)
	if got := h.req("GET", user, adminTok, "", nil).obj("quota_set"); got["instances"] != float64(10) {
		t.Fatalf("after delete %v", got)
	}
	boot(h, memberTok, "", nil).expect(t, 202)
	waitServer(h, id, "ACTIVE")
}

// TestAggregateImageCacheAgainstARealServer: 2.81's POST
// /os-aggregates/{id}/images records a cache request per image for the
// agents to fetch; Nova's 400s, 404s and 403s.
func TestAggregateImageCacheAgainstARealServer(t *testing.T) {
	h, s := newRealHarness(t, "hv-1")
	img := registerImage(t, s, &structs.Image{ID: "20000000-0000-0000-0000-000000000001", Name: "cached", Visibility: structs.ImagePublic,
		Owner: "p-admin", DiskFormat: "qcow2", ContainerFormat: "bare"})
	r := h.req("POST", "/compute/v2.1/os-aggregates", adminTok, "2.81", map[string]any{"aggregate": map[string]any{"name": "rack"}}).expect(t, 200)
	agg := strconv.Itoa(int(r.obj("aggregate")["id"].(float64)))
	h.req("POST", "/compute/v2.1/os-aggregates/"+agg+"/action", adminTok, "2.81", map[string]any{"add_host": map[string]any{"host": "hv-1"}}).expect(t, 200)
	path := "/compute/v2.1/os-aggregates/" + agg + "/images"
	body := map[string]any{"cache": []any{map[string]any{"id": img.ID}}}

	h.req("POST", path, adminTok, "2.80", body).fault(t, 404, "itemNotFound", "could not be found")
	h.req("POST", path, memberTok, "2.81", body).fault(t, 403, "forbidden", "compute:aggregates:images")
	h.req("POST", path, adminTok, "2.81", map[string]any{"cache": []any{}}).fault(t, 400, "badRequest", "Invalid input")
	h.req("POST", path, adminTok, "2.81", map[string]any{"cache": []any{map[string]any{"id": img.ID, "x": 1}}}).fault(t, 400, "badRequest", "Additional properties")
	h.req("POST", path, adminTok, "2.81", map[string]any{"cache": []any{map[string]any{"id": img.ID}, map[string]any{"id": img.ID}}}).
		fault(t, 400, "badRequest", "Duplicate images in request")
	h.req("POST", path, adminTok, "2.81", map[string]any{"cache": []any{map[string]any{"id": "20000000-0000-0000-0000-00000000beef"}}}).
		fault(t, 400, "badRequest", "Image 20000000-0000-0000-0000-00000000beef could not be found.")
	h.req("POST", "/compute/v2.1/os-aggregates/999/images", adminTok, "2.81", body).fault(t, 404, "itemNotFound", "Aggregate 999 could not be found.")

	r = h.req("POST", path, adminTok, "2.81", body).expect(t, 202)
	if len(r.raw) != 0 {
		t.Fatalf("202 with a body: %s", r.raw)
	}
	var out structs.ImageCacheListResponse
	if err := s.RPC("ImageCache.List", &structs.ImageCacheListRequest{}, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Requests) != 1 || out.Requests[0].ImageID != img.ID || strconv.Itoa(int(out.Requests[0].AggregateID)) != agg {
		t.Fatalf("cache requests %+v", out.Requests)
	}
}

// TestLocalBlockDeviceMappingsAgainstARealServer: the local mappings
// Nova accepts without Cinder boot; volumes are Nova's 501; the rules
// and messages of Nova's BDM validation apply.
func TestLocalBlockDeviceMappingsAgainstARealServer(t *testing.T) {
	h, s := newRealHarness(t, "hv-1")
	var fl structs.FlavorUpsertResponse
	if err := s.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{{ID: "eph", Name: "m1.eph", VCPUs: 1, MemoryMB: 512,
		RootGB: 1, EphemeralGB: 2, SwapMB: 512, RxTxFactor: 1, IsPublic: true, ExtraSpecs: map[string]string{}}}}, &fl); err != nil {
		t.Fatal(err)
	}
	const image = "30000000-0000-0000-0000-000000000001"
	root := map[string]any{"source_type": "image", "destination_type": "local", "boot_index": 0, "uuid": image, "delete_on_termination": true}
	bdm := func(flavor string, withImage bool, maps ...map[string]any) *response {
		s := map[string]any{"name": "vm", "flavorRef": flavor, "block_device_mapping_v2": maps, "networks": "none"}
		if withImage {
			s["imageRef"] = image
		}
		return h.req("POST", "/compute/v2.1/servers", memberTok, "2.67", map[string]any{"server": s})
	}
	r := bdm("eph", true, root,
		map[string]any{"source_type": "blank", "destination_type": "local", "guest_format": "swap", "volume_size": 512, "boot_index": -1},
		map[string]any{"source_type": "blank", "destination_type": "local", "volume_size": 2, "boot_index": nil}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	if s := waitServer(h, id, "ACTIVE"); s["image"].(map[string]any)["id"] != image {
		t.Fatalf("booted image %v", s["image"])
	}

	for _, tc := range []struct {
		flavor    string
		withImage bool
		maps      []map[string]any
		status    int
		msg       string
	}{
		{"eph", false, []map[string]any{root}, 400, "Mapping image to local is not supported."},
		{"eph", true, []map[string]any{{"source_type": "image", "destination_type": "local", "boot_index": 1, "uuid": image}}, 400,
			"Mapping image to local is not supported."},
		{"eph", true, []map[string]any{{"source_type": "blank", "destination_type": "local", "volume_size": 3}}, 400,
			"Ephemeral disks requested are larger than the instance type allows."},
		{"1", true, []map[string]any{{"source_type": "blank", "destination_type": "local", "volume_size": 1}}, 400,
			"Ephemeral disks requested are larger than the instance type allows."},
		{"eph", true, []map[string]any{{"source_type": "blank", "destination_type": "local", "guest_format": "swap", "volume_size": 1024}}, 400,
			"Swap drive requested is larger than instance type allows."},
		{"eph", true, []map[string]any{{"source_type": "blank", "guest_format": "swap"}, {"source_type": "blank", "guest_format": "swap"}}, 400,
			"More than one swap drive requested."},
		{"eph", true, []map[string]any{{"source_type": "blank", "destination_type": "local", "uuid": image}}, 400, "Invalid device UUID."},
		{"eph", true, []map[string]any{{"source_type": "image", "destination_type": "local", "boot_index": 0}}, 400, "Missing device UUID."},
		{"eph", true, []map[string]any{{"source_type": "blank", "destination_type": "local", "boot_index": 2}}, 400, "Boot sequence"},
		{"eph", true, []map[string]any{root, {"source_type": "blank", "volume_size": 1}, {"source_type": "blank", "volume_size": 1},
			{"source_type": "blank", "guest_format": "swap"}}, 400, "You specified more local devices than the limit allows"},
		{"eph", true, []map[string]any{{"source_type": "floppy", "uuid": image}}, 400, "Invalid input"},
		{"eph", true, []map[string]any{{"source_type": "blank", "destination_type": "local", "volume_size": 0}}, 400, "Invalid input"},
		{"eph", true, []map[string]any{{"source_type": "blank", "bogus": 1}}, 400, "Additional properties"},
		// Volumes (boot_volumes_test.go): this region has no storage
		// host to make one, and no such volume or image.
		{"eph", true, []map[string]any{{"source_type": "volume", "destination_type": "volume", "boot_index": 0,
			"uuid": "40000000-0000-0000-0000-000000000001"}}, 400, "failed to get volume 40000000-0000-0000-0000-000000000001."},
		{"eph", true, []map[string]any{{"source_type": "image", "destination_type": "volume", "boot_index": 0, "uuid": image, "volume_size": 1}}, 400,
			"failed to get image " + image},
	} {
		name := map[int]string{400: "badRequest", 500: "computeFault", 501: "notImplemented"}[tc.status]
		t.Run(tc.msg, func(t *testing.T) {
			bdm(tc.flavor, tc.withImage, tc.maps...).fault(t, tc.status, name, tc.msg)
		})
	}
	// A volume no storage host can make fails the build, not the
	// request, as in Nova: the server ends in ERROR with its fault.
	r = bdm("eph", true, map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1}).expect(t, 202)
	id = r.obj("server")["id"].(string)
	fault, _ := waitServer(h, id, "ERROR")["fault"].(map[string]any)
	if msg := fmt.Sprint(fault["message"]); !strings.HasPrefix(msg, "Build of instance "+id+" aborted: Volume ") ||
		!strings.HasSuffix(msg, " did not finish being created even after we waited 0 seconds or 1 attempts. And its status is error.") {
		t.Fatalf("fault: %v", fault)
	}
}
