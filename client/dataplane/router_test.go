package dataplane

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/google/uuid"
)

// TestFloatingIPsAndSNATAcrossHosts: floating IPs are distributed, SNAT
// is centralised. The external network is flat on physnet1, where an
// "outside" namespace lives; the tenant network is VXLAN across two
// hosts. Each host NATs the floating IPs of its own ports (host1 holds
// only its floating IP, with an on-link route for the external
// subnet); host0, the router's elected host, holds the gateway address
// and the SNAT. The outside reaches both floating IPs, both guests
// reach the outside from their floating IPs, and the guests without
// one, on host0 and on host1 (over the overlay to host0, as Neutron
// DVR sends them to its SNAT node), reach it from the router's gateway
// address. The hosts filter reverse paths strictly (rp_filter=1).
func TestFloatingIPsAndSNATAcrossHosts(t *testing.T) {
	requireNetTools(t)
	hosts := newUnderlayWith(t, 2, true)
	for _, h := range hosts {
		// Strict reverse-path filtering, as some distributions set it.
		sh(t, h.ns, "sysctl", "-q", "-w", "net.ipv4.conf.all.rp_filter=1")
	}
	tenant := overlayNet(4001)
	ext := externalNet()
	tcp22 := append([]Rule{{Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortMin: intp(22), PortMax: intp(22), AnyRemote: true}}, egressAll...)
	p1 := overlayPort(tenant, 0, "fa:16:3e:c0:00:01", "10.0.0.11")
	p2 := overlayPort(tenant, 1, "fa:16:3e:c0:00:02", "10.0.0.12")
	p3 := overlayPort(tenant, 0, "fa:16:3e:c0:00:03", "10.0.0.13")
	p4 := overlayPort(tenant, 1, "fa:16:3e:c0:00:04", "10.0.0.14")
	for _, p := range []*tport{&p1, &p2, &p3, &p4} {
		p.Rules = tcp22
	}
	g1, g2, g3, g4 := staticGuest(t, hosts[0], p1, 1450), staticGuest(t, hosts[1], p2, 1450),
		staticGuest(t, hosts[0], p3, 1450), staticGuest(t, hosts[1], p4, 1450)
	for _, g := range []*guest{g1, g2, g3, g4} {
		sh(t, g.ns, "ip", "route", "add", "default", "via", "10.0.0.1")
	}
	ports := []tport{p1, p2, p3, p4}
	for i, h := range hosts {
		d := desiredOf(hosts, i, []Network{tenant}, ports)
		e := ext
		switch i {
		case 0:
			e.Addresses = []string{"172.30.9.2/24", "172.30.9.10/32"}
			d.FloatingIPs = []FloatingIP{{Address: "172.30.9.10", FixedIP: "10.0.0.11", PortID: p1.ID, ExternalNetworkID: ext.ID}}
			d.Routers = []Router{routerOf(hosts, 0, "r1", tenant, ext, "172.30.9.2")}
		case 1:
			e.Addresses = []string{"172.30.9.11/32"}
			d.FloatingIPs = []FloatingIP{{Address: "172.30.9.11", FixedIP: "10.0.0.12", PortID: p2.ID, ExternalNetworkID: ext.ID}}
			d.Routers = []Router{routerOf(hosts, 0, "r1", tenant, ext, "")}
		}
		e.OnLink = onLink(e.Subnets, e.Addresses)
		d.Networks = append(d.Networks, e)
		apply(t, h.plane, d)
		apply(t, h.plane, d)
	}
	if got := onLink(ext.Subnets, []string{"172.30.9.11/32"}); !reflect.DeepEqual(got, []string{"172.30.9.0/24"}) {
		t.Fatalf("on-link of a floating-IP-only host: %v", got)
	}
	if got := onLink(ext.Subnets, []string{"172.30.9.2/24", "172.30.9.10/32"}); got != nil {
		t.Fatalf("on-link of the gateway's host: %v", got)
	}

	out := newOutside(t, hosts[0], "172.30.9.100/24")
	for _, g := range []*guest{g1, g2} {
		g.listen(t, 22)
	}
	waitFor(t, "the outside reaching both hosts' floating IPs", func() error {
		for _, fip := range []string{"172.30.9.10", "172.30.9.11"} {
			if !out.connects(fip, 22) {
				return fmt.Errorf("%s:22 refused", fip)
			}
		}
		return nil
	})
	out.listen(t, 8080)
	for name, g := range map[string]*guest{"host0's floating IP": g1, "host1's floating IP": g2} {
		if !g.connects("172.30.9.100", 8080) {
			t.Fatalf("a guest cannot reach the outside through %s", name)
		}
	}
	if got := out.sources(t); !reflect.DeepEqual(got, []string{"172.30.9.10", "172.30.9.11"}) {
		t.Fatalf("the outside saw connections from %v, want the floating IPs", got)
	}
	for name, g := range map[string]*guest{"on the SNAT host": g3, "on another host": g4} {
		out.resetSources(t)
		if !g.connects("172.30.9.100", 8080) {
			t.Fatalf("a guest without a floating IP %s cannot reach the outside", name)
		}
		if got := out.sources(t); !reflect.DeepEqual(got, []string{"172.30.9.2"}) {
			t.Fatalf("a guest without a floating IP %s reached the outside from %v, want the router's gateway", name, got)
		}
	}
	if out.connects("10.0.0.12", 22) {
		t.Fatal("a fixed address is reachable from outside")
	}
}

// TestElectHost: every host elects the same one, whatever order it
// lists the candidates in, and routers spread over hosts.
func TestElectHost(t *testing.T) {
	hosts := []string{"h1", "h2", "h3", "h4"}
	if electHost("r", nil) != "" {
		t.Fatal("a host elected among none")
	}
	counts := map[string]int{}
	for i := 0; i < 200; i++ {
		r := uuid.NewString()
		a := electHost(r, append([]string(nil), hosts...))
		b := electHost(r, []string{"h4", "h2", "h3", "h1"})
		if a != b {
			t.Fatalf("router %s: %s and %s elected", r, a, b)
		}
		counts[a]++
	}
	for _, h := range hosts {
		if counts[h] < 20 {
			t.Fatalf("routers per host %v", counts)
		}
	}
}
