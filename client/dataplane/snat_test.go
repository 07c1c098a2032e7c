package dataplane

import (
	"fmt"
	"reflect"
	"testing"
)

// TestOverlappingTenantsOnOneHost: two tenants' networks with the same
// CIDR on one host, each behind its own router holding its SNAT there,
// with guests of the same addresses. Each tenant's traffic is routed by
// its own table: a guest without a floating IP reaches the outside from
// its own router's gateway address, and each floating IP reaches its
// own tenant's guest (the replies, un-NATed to the shared fixed
// address, find their bridge by the connection's mark). The host
// filters reverse paths strictly (rp_filter=1), as some distributions
// do.
func TestOverlappingTenantsOnOneHost(t *testing.T) {
	requireNetTools(t)
	hosts := newUnderlayWith(t, 1, true)
	// A strict host: reverse-path filtering does not see policy routing.
	sh(t, hosts[0].ns, "sysctl", "-q", "-w", "net.ipv4.conf.all.rp_filter=1")
	a, b := overlayNet(4101), overlayNet(4102)
	ext := externalNet()
	a1, a2 := newPort(a, 0, "fa:16:3e:a0:00:05", "10.0.0.5"), newPort(a, 0, "fa:16:3e:a0:00:06", "10.0.0.6")
	b1, b2 := newPort(b, 0, "fa:16:3e:b0:00:05", "10.0.0.5"), newPort(b, 0, "fa:16:3e:b0:00:06", "10.0.0.6")
	gA1, gA2, gB1, gB2 := routedGuest(t, hosts[0], a1), routedGuest(t, hosts[0], a2), routedGuest(t, hosts[0], b1), routedGuest(t, hosts[0], b2)
	d := desiredOf(hosts, 0, []Network{a, b}, []tport{a1, a2, b1, b2})
	e := ext
	e.Addresses = []string{"172.30.9.2/24", "172.30.9.3/24", "172.30.9.20/32", "172.30.9.21/32"}
	d.Networks = append(d.Networks, e)
	d.Routers = []Router{routerOf(hosts, 0, "ra", a, ext, "172.30.9.2"), routerOf(hosts, 0, "rb", b, ext, "172.30.9.3")}
	d.FloatingIPs = []FloatingIP{
		{Address: "172.30.9.20", FixedIP: "10.0.0.6", PortID: a2.ID, ExternalNetworkID: ext.ID},
		{Address: "172.30.9.21", FixedIP: "10.0.0.6", PortID: b2.ID, ExternalNetworkID: ext.ID},
	}
	apply(t, hosts[0].plane, d)
	apply(t, hosts[0].plane, d)

	out := newOutside(t, hosts[0], "172.30.9.100/24")
	out.listen(t, 8080)
	for _, c := range []struct {
		name string
		g    *guest
		want string
	}{{"tenant A's", gA1, "172.30.9.2"}, {"tenant B's", gB1, "172.30.9.3"}, {"tenant A's again", gA1, "172.30.9.2"}} {
		out.resetSources(t)
		if !c.g.connects("172.30.9.100", 8080) {
			t.Fatalf("%s guest cannot reach the outside", c.name)
		}
		if got := out.sources(t); !reflect.DeepEqual(got, []string{c.want}) {
			t.Fatalf("%s guest reached the outside from %v, want its router's gateway %s", c.name, got, c.want)
		}
	}
	// The same fixed address behind two floating IPs: A's guest listens
	// on 22 only, B's on 23 only.
	gA2.listen(t, 22)
	gB2.listen(t, 23)
	waitFor(t, "each floating IP reaching its own tenant's guest", func() error {
		if !out.connects("172.30.9.20", 22) || !out.connects("172.30.9.21", 23) {
			return fmt.Errorf("a floating IP does not reach its guest")
		}
		return nil
	})
	if out.connects("172.30.9.20", 23) || out.connects("172.30.9.21", 22) {
		t.Fatal("a floating IP reaches the other tenant's guest")
	}
	out.resetSources(t)
	if !gB2.connects("172.30.9.100", 8080) {
		t.Fatal("tenant B's guest with a floating IP cannot reach the outside")
	}
	if got := out.sources(t); !reflect.DeepEqual(got, []string{"172.30.9.21"}) {
		t.Fatalf("tenant B's guest with a floating IP reached the outside from %v", got)
	}
}

// TestTenantTrafficNeverLeavesUnNATed: the host has a default route of
// its own (to the underlay's 10.99.0.254, which records what reaches
// its TCP port 8080). A guest of a network without a router, and a
// guest behind a router with no route to that address, are refused;
// nothing from a tenant address reaches the underlay. The routed guest
// still reaches the outside through its router's SNAT.
func TestTenantTrafficNeverLeavesUnNATed(t *testing.T) {
	requireNetTools(t)
	hosts := newUnderlayWith(t, 1, true)
	routed, isolated := overlayNet(4201), overlayNet(4202)
	isolated.Subnets[0].CIDR, isolated.Subnets[0].GatewayIP = "10.1.0.0/24", "10.1.0.1"
	ext := externalNet()
	pr := newPort(routed, 0, "fa:16:3e:d0:00:05", "10.0.0.5")
	pi := newPort(isolated, 0, "fa:16:3e:d1:00:05", "10.1.0.5")
	gR := routedGuest(t, hosts[0], pr)
	gI := staticGuest(t, hosts[0], pi, 1450)
	sh(t, gI.ns, "ip", "route", "add", "default", "via", "10.1.0.1")
	d := desiredOf(hosts, 0, []Network{routed, isolated}, []tport{pr, pi})
	e := ext
	e.Addresses = []string{"172.30.9.2/24"}
	d.Networks = append(d.Networks, e)
	d.Routers = []Router{routerOf(hosts, 0, "r1", routed, ext, "172.30.9.2")}
	apply(t, hosts[0].plane, d)

	underlay := &guest{ns: hosts[0].underlay}
	sh(t, underlay.ns, "ip", "addr", "add", "10.99.0.254/24", "dev", "ul")
	sh(t, hosts[0].ns, "ip", "route", "add", "default", "via", "10.99.0.254")
	underlay.recordSources(t, "ul", 8080)
	underlay.listen(t, 8080)
	host := &guest{ns: hosts[0].ns}
	if !host.connects("10.99.0.254", 8080) {
		t.Fatal("the host itself cannot reach the underlay")
	}
	for name, g := range map[string]*guest{"without a router": gI, "behind a router": gR} {
		if g.connects("10.99.0.254", 8080) || g.connects("192.0.2.1", 8080) {
			t.Fatalf("a guest %s reaches past its network through the host's own routes", name)
		}
	}
	if got := underlay.sources(t); !reflect.DeepEqual(got, []string{"10.99.0.1"}) {
		t.Fatalf("the underlay saw connections from %v, want only the host's", got)
	}
	outside := newOutside(t, hosts[0], "172.30.9.100/24")
	outside.listen(t, 8080)
	if !gR.connects("172.30.9.100", 8080) {
		t.Fatal("the routed guest cannot reach the outside")
	}
	if gI.connects("172.30.9.100", 8080) {
		t.Fatal("a guest of a network without a router reaches the outside")
	}
}

// TestOverlappingTenantsLeaveFromAnotherHost: two tenants' networks
// with the same CIDR, guests of the same address on host1, both
// routers' SNAT on host0 (which has a port of tenant A only, and joins
// tenant B's network for its router). Each guest leaves through its
// own router's gateway, over its own network's overlay.
func TestOverlappingTenantsLeaveFromAnotherHost(t *testing.T) {
	requireNetTools(t)
	hosts := newUnderlayWith(t, 2, true)
	for _, h := range hosts {
		sh(t, h.ns, "sysctl", "-q", "-w", "net.ipv4.conf.all.rp_filter=1")
	}
	a, b := overlayNet(4301), overlayNet(4302)
	ext := externalNet()
	a0 := newPort(a, 0, "fa:16:3e:a1:00:07", "10.0.0.7")
	a1, b1 := newPort(a, 1, "fa:16:3e:a1:00:05", "10.0.0.5"), newPort(b, 1, "fa:16:3e:b1:00:05", "10.0.0.5")
	routedGuest(t, hosts[0], a0)
	gA, gB := routedGuest(t, hosts[1], a1), routedGuest(t, hosts[1], b1)
	ports := []tport{a0, a1, b1}
	d0 := desiredOf(hosts, 0, []Network{a, b}, ports)
	// The elected host joins tenant B's network: its bridge, and the
	// entries of B's ports elsewhere.
	d0.Networks = append(d0.Networks, b)
	d0.Remote = append(d0.Remote, RemotePort{ID: b1.ID, NetworkID: b.ID, MAC: b1.MAC, IPs: b1.IPs, HostID: hosts[1].id, TunnelIP: hosts[1].vtep})
	e := ext
	e.Addresses = []string{"172.30.9.2/24", "172.30.9.3/24"}
	d0.Networks = append(d0.Networks, e)
	d0.Routers = []Router{routerOf(hosts, 0, "ra", a, ext, "172.30.9.2"), routerOf(hosts, 0, "rb", b, ext, "172.30.9.3")}
	d1 := desiredOf(hosts, 1, []Network{a, b}, ports)
	d1.Routers = []Router{routerOf(hosts, 0, "ra", a, ext, ""), routerOf(hosts, 0, "rb", b, ext, "")}
	apply(t, hosts[0].plane, d0)
	apply(t, hosts[1].plane, d1)

	out := newOutside(t, hosts[0], "172.30.9.100/24")
	out.listen(t, 8080)
	for _, c := range []struct {
		name string
		g    *guest
		want string
	}{{"tenant A's", gA, "172.30.9.2"}, {"tenant B's", gB, "172.30.9.3"}} {
		out.resetSources(t)
		if !c.g.connects("172.30.9.100", 8080) {
			t.Fatalf("%s guest on the other host cannot reach the outside", c.name)
		}
		if got := out.sources(t); !reflect.DeepEqual(got, []string{c.want}) {
			t.Fatalf("%s guest reached the outside from %v, want its router's gateway %s", c.name, got, c.want)
		}
	}
}
