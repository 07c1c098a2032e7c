package dataplane

import (
	"slices"
	"strings"
	"testing"
)

// TestDnsmasqAdvertisesTheMTU: every network's dnsmasq forces option 26
// (interface-mtu) with the network's MTU, asked for or not, and a
// change of the MTU changes the command line (which restarts dnsmasq).
func TestDnsmasqAdvertisesTheMTU(t *testing.T) {
	p, err := New(Config{Owner: "h1", StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	v4 := Subnet{ID: "s4", IPVersion: 4, CIDR: "10.0.0.0/24", GatewayIP: "10.0.0.1", DHCP: true}
	v6 := Subnet{ID: "s6", IPVersion: 6, CIDR: "fd00::/64", GatewayIP: "fd00::1", DHCP: true, IPv6AddressMode: "dhcpv6-stateful"}
	forced := func(args []string) []string {
		var out []string
		for _, a := range args {
			if strings.HasPrefix(a, "--dhcp-option-force=") {
				out = append(out, a)
			}
		}
		return out
	}
	n := &Network{ID: "n1", MTU: 1450, Subnets: []Subnet{v4, v6}}
	if got := forced(p.dnsmasqArgs(n, dhcpSubnets(n))); !slices.Equal(got, []string{"--dhcp-option-force=26,1450"}) {
		t.Fatalf("vxlan network: %v", got)
	}
	n.MTU = 9000
	if got := forced(p.dnsmasqArgs(n, dhcpSubnets(n))); !slices.Equal(got, []string{"--dhcp-option-force=26,9000"}) {
		t.Fatalf("after an MTU change: %v", got)
	}
	// DHCPv6 has no MTU option; a network without an MTU sends none.
	for _, n := range []*Network{{ID: "n2", MTU: 1450, Subnets: []Subnet{v6}}, {ID: "n3", Subnets: []Subnet{v4}}} {
		if got := forced(p.dnsmasqArgs(n, dhcpSubnets(n))); len(got) != 0 {
			t.Fatalf("network %s: %v", n.ID, got)
		}
	}
	// The options file no longer carries an unforced duplicate.
	if opts := string(optsFile(dhcpSubnets(n))); strings.Contains(opts, "mtu") {
		t.Fatalf("opts file %q", opts)
	}
}
