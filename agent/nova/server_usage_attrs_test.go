package nova

import (
	"testing"
	"time"
)

// TestServerUsageAndExtendedAttributes: launched_at is set once a server
// comes up ACTIVE (Python's naive isoformat, as Nova's api_samples), and
// the 2.3 extended attributes carry Nova's types: launch_index a number
// counting from 0 within a multi-create, the root device once built,
// "" for no kernel or ramdisk and null for no user data.
func TestServerUsageAndExtendedAttributes(t *testing.T) {
	h, _ := newRealHarness(t, "hv-1")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "usg", "imageRef": "cirros", "flavorRef": "1", "min_count": 2, "return_reservation_id": true}}).expect(t, 202)
	resv := r.obj()["reservation_id"].(string)
	list := h.req("GET", "/compute/v2.1/servers/detail?all_tenants=1&reservation_id="+resv, adminTok, "2.3", nil).expect(t, 200).list("servers")
	if len(list) != 2 {
		t.Fatalf("servers of the reservation: %v", list)
	}
	indexes := map[float64]bool{}
	for _, raw := range list {
		id := raw.(map[string]any)["id"].(string)
		s := waitServer(h, id, "ACTIVE")
		launched, ok := s["OS-SRV-USG:launched_at"].(string)
		if !ok {
			t.Fatalf("launched_at of an ACTIVE server: %v", s["OS-SRV-USG:launched_at"])
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000000", launched); err != nil {
			t.Fatalf("launched_at %q: %v", launched, err)
		}
		if s["OS-SRV-USG:terminated_at"] != nil {
			t.Fatalf("terminated_at of a live server: %v", s["OS-SRV-USG:terminated_at"])
		}
		idx, ok := s["OS-EXT-SRV-ATTR:launch_index"].(float64)
		if !ok {
			t.Fatalf("launch_index: %#v", s["OS-EXT-SRV-ATTR:launch_index"])
		}
		indexes[idx] = true
		want := map[string]any{"OS-EXT-SRV-ATTR:root_device_name": "/dev/vda", "OS-EXT-SRV-ATTR:kernel_id": "",
			"OS-EXT-SRV-ATTR:ramdisk_id": "", "OS-EXT-SRV-ATTR:user_data": nil, "OS-EXT-SRV-ATTR:reservation_id": resv}
		for k, v := range want {
			if got, ok := s[k]; !ok || got != v {
				t.Errorf("%s = %#v (present %v), want %#v", k, got, ok, v)
			}
		}
		if _, ok := s["OS-EXT-SRV-ATTR:hostname"].(string); !ok {
			t.Errorf("hostname: %#v", s["OS-EXT-SRV-ATTR:hostname"])
		}
		// A stop and a start keep the launch time.
		act(h, id, memberTok, "", `{"os-stop": null}`).expect(t, 202)
		if s := waitServer(h, id, "SHUTOFF"); s["OS-SRV-USG:launched_at"] != launched {
			t.Fatalf("launched_at after stop: %v, was %s", s["OS-SRV-USG:launched_at"], launched)
		}
		act(h, id, memberTok, "", `{"os-start": null}`).expect(t, 202)
		waitServer(h, id, "ACTIVE")
		// A rebuild launches the guest anew, and Nova records when.
		act(h, id, memberTok, "", `{"rebuild": {"imageRef": "cirros"}}`).expect(t, 202)
		if s := waitServer(h, id, "ACTIVE"); s["OS-SRV-USG:launched_at"].(string) <= launched {
			t.Fatalf("launched_at after rebuild: %v, was %s", s["OS-SRV-USG:launched_at"], launched)
		}
	}
	if !indexes[0] || !indexes[1] {
		t.Fatalf("launch indexes: %v", indexes)
	}
	sorted := h.req("GET", "/compute/v2.1/servers/detail?all_tenants=1&sort_key=launch_index&sort_dir=desc&reservation_id="+resv,
		adminTok, "2.3", nil).expect(t, 200).list("servers")
	if len(sorted) != 2 || sorted[0].(map[string]any)["OS-EXT-SRV-ATTR:launch_index"] != float64(1) {
		t.Fatalf("sorted by launch_index desc: %v", sorted)
	}
}
