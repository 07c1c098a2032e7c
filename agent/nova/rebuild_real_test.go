package nova

import (
	"testing"
)

func TestRebuildAgainstARealServer(t *testing.T) {
	h, s := newRealHarness(t, "hv-1")
	makePrivate(t, s, publicNetwork(t, s))
	id := boot(h, memberTok, "", map[string]any{"user_data": "IyEvYmluL3NoCg=="}).expect(t, 202).obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	rebuild := func(tok, version string, extra map[string]any) map[string]any {
		t.Helper()
		body := map[string]any{"imageRef": "cirros"}
		for k, v := range extra {
			body[k] = v
		}
		return act(h, id, tok, version, map[string]any{"rebuild": body}).expect(t, 202).obj("server")
	}
	// Before 2.75 the addresses are not extended; from 2.75 they are.
	v := rebuild(memberTok, "2.74", nil)
	addr := v["addresses"].(map[string]any)["private"].([]any)[0].(map[string]any)
	if len(addr) != 2 || addr["addr"] != "10.0.0.2" || addr["version"] != 4.0 {
		t.Fatalf("2.74 rebuild addresses %v", v["addresses"])
	}
	waitServer(h, id, "ACTIVE")
	for _, c := range []struct {
		version string
		has     []string
		hasNot  []string
	}{
		{"2.56", []string{"key_name"}, []string{"user_data", "trusted_image_certificates", "locked_reason", "OS-EXT-SRV-ATTR:hostname"}},
		{"2.57", []string{"user_data"}, []string{"trusted_image_certificates", "locked_reason"}},
		{"2.63", []string{"user_data", "trusted_image_certificates"}, []string{"locked_reason"}},
		{"2.73", []string{"locked_reason"}, []string{"OS-EXT-SRV-ATTR:hostname"}},
		{"2.90", []string{"OS-EXT-SRV-ATTR:hostname", "security_groups", "OS-EXT-STS:vm_state"}, []string{"OS-EXT-SRV-ATTR:user_data"}},
	} {
		v := rebuild(memberTok, c.version, nil)
		for _, k := range c.has {
			if _, ok := v[k]; !ok {
				t.Fatalf("%s rebuild lacks %s: %v", c.version, k, v)
			}
		}
		for _, k := range c.hasNot {
			if _, ok := v[k]; ok {
				t.Fatalf("%s rebuild has %s: %v", c.version, k, v)
			}
		}
		if c.version >= "2.57" && v["user_data"] != "IyEvYmluL3NoCg==" {
			t.Fatalf("%s user_data %v", c.version, v["user_data"])
		}
		waitServer(h, id, "ACTIVE")
	}
	// user_data replaces the server's (null removes it), as the guest's
	// metadata then shows; before 2.57 it is not a rebuild field.
	if v := rebuild(memberTok, "2.57", map[string]any{"user_data": "bmV3Cg=="}); v["user_data"] != "bmV3Cg==" {
		t.Fatalf("rebuild with user_data answered %v", v["user_data"])
	}
	if s := waitServer(h, id, "ACTIVE"); s["OS-EXT-SRV-ATTR:user_data"] != "bmV3Cg==" {
		t.Fatalf("user data after the rebuild %v", s["OS-EXT-SRV-ATTR:user_data"])
	}
	act(h, id, memberTok, "2.56", map[string]any{"rebuild": map[string]any{"imageRef": "cirros", "user_data": "eAo="}}).
		fault(t, 400, "badRequest", "Additional properties are not allowed")
	if v := rebuild(memberTok, "2.57", map[string]any{"user_data": nil}); v["user_data"] != nil {
		t.Fatalf("rebuild with user_data null answered %v", v["user_data"])
	}
	if s := waitServer(h, id, "ACTIVE"); s["OS-EXT-SRV-ATTR:user_data"] != nil {
		t.Fatalf("user data after a rebuild removing it %v", s["OS-EXT-SRV-ATTR:user_data"])
	}
	v = rebuild(memberTok, "2.75", nil)
	addr = v["addresses"].(map[string]any)["private"].([]any)[0].(map[string]any)
	if addr["OS-EXT-IPS:type"] != "fixed" || addr["OS-EXT-IPS-MAC:mac_addr"] == nil {
		t.Fatalf("2.75 rebuild addresses %v", v["addresses"])
	}
	waitServer(h, id, "ACTIVE")

	// A stopped server stays stopped.
	act(h, id, memberTok, "", `{"os-stop": null}`).expect(t, 202)
	waitServer(h, id, "SHUTOFF")
	rebuild(memberTok, "", nil)
	if s := waitServer(h, id, "SHUTOFF"); s["OS-EXT-STS:power_state"] != 4.0 {
		t.Fatalf("rebuilt stopped server %v", s)
	}
	act(h, id, memberTok, "", `{"os-start": null}`).expect(t, 202)
	waitServer(h, id, "ACTIVE")

	// A server in ERROR is rebuilt by an admin, and comes back ACTIVE.
	act(h, id, adminTok, "", `{"os-resetState": {"state": "error"}}`).expect(t, 202)
	waitServer(h, id, "ERROR")
	rebuild(adminTok, "2.75", nil)
	waitServer(h, id, "ACTIVE")
}
