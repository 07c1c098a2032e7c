package structs

import (
	"net/netip"
	"reflect"
	"testing"
)

func TestSubnetArithmetic(t *testing.T) {
	p, err := ParseSubnetCIDR("10.0.0.0/24", 4)
	if err != nil {
		t.Fatal(err)
	}
	if g := DefaultGateway(p); g.String() != "10.0.0.1" {
		t.Fatalf("gateway %s", g)
	}
	if got := DefaultPools(p, netip.MustParseAddr("10.0.0.1")); !reflect.DeepEqual(got, []IPRange{{"10.0.0.2", "10.0.0.254"}}) {
		t.Fatalf("pools %v", got)
	}
	if got := DefaultPools(p, netip.MustParseAddr("10.0.0.100")); !reflect.DeepEqual(got, []IPRange{{"10.0.0.1", "10.0.0.99"}, {"10.0.0.101", "10.0.0.254"}}) {
		t.Fatalf("pools around a middle gateway %v", got)
	}
	v6, _ := ParseSubnetCIDR("2001:db8::/64", 6)
	if got := DefaultPools(v6, DefaultGateway(v6)); !reflect.DeepEqual(got, []IPRange{{"2001:db8::2", "2001:db8::ffff:ffff:ffff:ffff"}}) {
		t.Fatalf("v6 pools %v", got)
	}
	for _, bad := range []struct {
		cidr    string
		version int
	}{{"10.0.0.5/24", 4}, {"10.0.0.0/24", 6}, {"nope", 4}, {"10.0.0.0/31", 4}, {"::ffff:10.0.0.0/120", 0}} {
		if _, err := ParseSubnetCIDR(bad.cidr, bad.version); KindOf(err) != KindInvalid || ErrorType(err) != ErrInvalidInput {
			t.Errorf("%s v%d: %v", bad.cidr, bad.version, err)
		}
	}
	if _, err := ValidatePools(p, []IPRange{{"10.0.0.10", "10.0.0.20"}, {"10.0.0.15", "10.0.0.30"}}, ""); ErrorType(err) != ErrOverlappingAllocationPools {
		t.Errorf("overlapping pools: %v", err)
	}
	if _, err := ValidatePools(p, []IPRange{{"10.0.0.1", "10.0.0.20"}}, "10.0.0.1"); ErrorType(err) != ErrGatewayConflictWithAllocationPools {
		t.Errorf("pool with the gateway: %v", err)
	}
	if _, err := ValidatePools(p, []IPRange{{"10.0.0.200", "10.0.1.20"}}, ""); ErrorType(err) != ErrInvalidAllocationPool {
		t.Errorf("pool past the subnet: %v", err)
	}
}

func TestLowestFree(t *testing.T) {
	addrs := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	pools := []IPRange{{"10.0.0.10", "10.0.0.12"}, {"10.0.0.2", "10.0.0.3"}}
	for _, c := range []struct {
		used []netip.Addr
		want string
	}{
		{nil, "10.0.0.2"},
		{addrs("10.0.0.2"), "10.0.0.3"},
		{addrs("10.0.0.1", "10.0.0.2", "10.0.0.3"), "10.0.0.10"},
		{addrs("10.0.0.2", "10.0.0.3", "10.0.0.10", "10.0.0.12"), "10.0.0.11"},
		{addrs("10.0.0.2", "10.0.0.3", "10.0.0.10", "10.0.0.11", "10.0.0.12"), ""},
	} {
		got, ok := LowestFree(pools, c.used)
		if (c.want == "") == ok || ok && got.String() != c.want {
			t.Errorf("used %v: %v %v, want %q", c.used, got, ok, c.want)
		}
	}
}

func TestEUI64AndMACs(t *testing.T) {
	p := netip.MustParsePrefix("2001:db8::/64")
	a, err := EUI64(p, "fa:16:3e:11:22:33")
	if err != nil || a.String() != "2001:db8::f816:3eff:fe11:2233" {
		t.Fatalf("EUI-64 %s %v", a, err)
	}
	for mac, ok := range map[string]bool{"fa:16:3e:00:00:01": true, "FA:16:3E:AB:CD:EF": true, "01:00:5e:00:00:01": false,
		"fa-16-3e-00-00-01": false, "00:00:00:00:00:00": false, "nope": false} {
		if ValidMAC(mac) != ok {
			t.Errorf("ValidMAC(%s) = %v", mac, !ok)
		}
	}
	if NormalizeMAC("FA:16:3E:AB:CD:EF") != "fa:16:3e:ab:cd:ef" {
		t.Error("NormalizeMAC")
	}
}

func TestErrorTypesCrossRPC(t *testing.T) {
	err := NetErrorf(KindConflict, ErrIPAddressGenerationFailure, "No more IP addresses available on network n.")
	wire := &wrapped{"NetApply: " + err.Error()}
	if KindOf(wire) != KindConflict || ErrorType(wire) != ErrIPAddressGenerationFailure ||
		Message(wire) != "No more IP addresses available on network n." || Message(err) != Message(wire) {
		t.Fatalf("across the wire: %q %q %q", KindOf(wire), ErrorType(wire), Message(wire))
	}
	plain := &wrapped{"conflict: Instance x is locked"}
	if ErrorType(plain) != "" || Message(plain) != "Instance x is locked" {
		t.Fatalf("plain error: %q %q", ErrorType(plain), Message(plain))
	}
}

type wrapped struct{ s string }

func (w *wrapped) Error() string { return w.s }
