package structs

import "testing"

func TestValidTunnelIP(t *testing.T) {
	for ip, ok := range map[string]bool{"10.0.0.1": true, "2001:db8::1": true, "127.0.0.1": true,
		"": false, "eth0": false, "0.0.0.0": false, "::": false, "239.1.1.1": false, "fe80::1": false, "169.254.1.1": false, "fe80::1%eth0": false} {
		if err := ValidTunnelIP(ip); (err == nil) != ok {
			t.Errorf("ValidTunnelIP(%q) = %v, want ok=%v", ip, err, ok)
		}
	}
	h := &Host{ID: "h", Name: "h", TunnelIP: "not-an-ip"}
	if KindOf(h.Validate()) != KindInvalid {
		t.Fatal("a host with a bad tunnel endpoint validated")
	}
	h.TunnelIP = "10.0.0.9"
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
}
