package dataplane

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

// overlayNet is a VXLAN tenant network on 10.0.0.0/24 (every test
// network has the same CIDR: tenants' address spaces overlap).
func overlayNet(vni int) Network {
	return Network{ID: uuid.NewString(), MTU: 1450, Type: structs.NetTypeVXLAN, SegmentationID: vni,
		Subnets: []Subnet{{ID: uuid.NewString(), IPVersion: 4, CIDR: "10.0.0.0/24", GatewayIP: "10.0.0.1", DHCP: true}}}
}

// pingRules allow ICMP in from anywhere, and everything out.
var pingRules = append([]Rule{{Direction: "ingress", EtherType: "IPv4", Protocol: "icmp", AnyRemote: true}}, egressAll...)

func overlayPort(n Network, host int, mac, ip string) tport {
	return tport{Port: Port{ID: uuid.NewString(), NetworkID: n.ID, MAC: mac, IPs: []string{ip}, PortSecurity: true,
		Rules: pingRules}, host: host}
}

// TestOverlayAcrossHosts is the proof of the overlay on one machine:
// three hosts (network namespaces on a shared underlay bridge), two
// tenants' VXLAN networks with the same CIDR, guests plugged like
// instance taps. Guests of one network on different hosts reach each
// other (full-size packets at the overlay MTU included) and get DHCP
// from their own host; the other tenant's guests, at the same
// addresses, are never reached; security groups allow and deny across
// hosts as on one; each host's forwarding table holds
// exactly the other hosts' ports of its networks; deleting a port
// removes its entries on every host; a restarted plane repairs its
// entries and leaves a device it did not make alone.
func TestOverlayAcrossHosts(t *testing.T) {
	requireNetTools(t)
	hosts := newUnderlay(t, 3)
	netA, netB := overlayNet(1001), overlayNet(1002)
	nets := []Network{netA, netB}
	a1 := overlayPort(netA, 0, "fa:16:3e:a0:00:01", "10.0.0.11")
	a2 := overlayPort(netA, 1, "fa:16:3e:a0:00:02", "10.0.0.12")
	a3 := overlayPort(netA, 2, "fa:16:3e:a0:00:03", "10.0.0.13")
	b1 := overlayPort(netB, 0, "fa:16:3e:b0:00:01", "10.0.0.11")
	b2 := overlayPort(netB, 1, "fa:16:3e:b0:00:02", "10.0.0.12")
	b3 := overlayPort(netB, 1, "fa:16:3e:b0:00:03", "10.0.0.21")
	ports := []tport{a1, a2, a3, b1, b2, b3}

	gA1 := newGuest(t, hosts[0].ns, a1.ID, a1.MAC)
	gA2, gA3 := staticGuest(t, hosts[1], a2, 1450), staticGuest(t, hosts[2], a3, 1450)
	gB1, _, gB3 := staticGuest(t, hosts[0], b1, 1450), staticGuest(t, hosts[1], b2, 1450), staticGuest(t, hosts[1], b3, 1450)
	applyAll(t, hosts, nets, ports)
	applyAll(t, hosts, nets, ports) // idempotent

	// host0 serves both networks, host2 only A.
	for i, want := range []map[string][]string{
		{netA.ID: {"00:00:00:00:00:00 10.99.0.2", "00:00:00:00:00:00 10.99.0.3", a2.MAC + " 10.99.0.2", a3.MAC + " 10.99.0.3"},
			netB.ID: {"00:00:00:00:00:00 10.99.0.2", b2.MAC + " 10.99.0.2", b3.MAC + " 10.99.0.2"}},
		nil,
		{netA.ID: {"00:00:00:00:00:00 10.99.0.1", "00:00:00:00:00:00 10.99.0.2", a1.MAC + " 10.99.0.1", a2.MAC + " 10.99.0.2"},
			netB.ID: nil},
	} {
		for netID, fdb := range want {
			if got := fdbOf(t, hosts[i].ns, VXLANName(netID)); !reflect.DeepEqual(got, sortedUnique(fdb)) {
				t.Fatalf("host%d %s: fdb %q, want %q", i, VXLANName(netID), got, fdb)
			}
		}
	}
	vx := linkInfo(t, hosts[0].ns, VXLANName(netA.ID))
	if vx == nil || vx.Master != BridgeName(netA.ID) || vx.MTU != 1450 || vx.IfAlias != hosts[0].plane.alias() {
		t.Fatalf("VXLAN device %+v", vx)
	}

	// DHCP is answered by the guest's own host only.
	if got, err := gA1.dhcp(); err != nil || got != "10.0.0.11" {
		t.Fatalf("DHCP across the overlay: %q, %v", got, err)
	}
	sh(t, gA1.ns, "ip", "link", "set", "eth0", "mtu", "1450")

	waitFor(t, "A's guests to reach each other across hosts", func() error {
		for g, addrs := range map[*guest][]string{gA1: {"10.0.0.12", "10.0.0.13"}, gA3: {"10.0.0.11", "10.0.0.12"}, gB1: {"10.0.0.12", "10.0.0.21"}} {
			for _, a := range addrs {
				if !g.pings(a) {
					return fmt.Errorf("%s cannot ping %s", g.ns, a)
				}
			}
		}
		return nil
	})
	// A full-size packet at the overlay MTU (1450 = 1500 - 50) crosses.
	if _, err := tryIn(gA1.ns, 30*time.Second, "ping", "-c", "1", "-W", "3", "-M", "do", "-s", "1422", "10.0.0.12"); err != nil {
		t.Fatalf("1450-byte packet across the overlay: %v", err)
	}
	// Same addresses, other tenant: each resolves to its own network's
	// guest, and B's address that A lacks is unreachable from A.
	if got := gA1.neighMAC("10.0.0.12"); got != a2.MAC {
		t.Fatalf("A's guest resolved 10.0.0.12 to %q, want %s", got, a2.MAC)
	}
	if got := gB1.neighMAC("10.0.0.12"); got != b2.MAC {
		t.Fatalf("B's guest resolved 10.0.0.12 to %q, want %s", got, b2.MAC)
	}
	if gA1.pings("10.0.0.21") || gB3.pings("10.0.0.13") || gA2.pings("10.0.0.21") {
		t.Fatal("a guest reached the other tenant's network")
	}

	// Security groups hold across hosts: a port whose groups let no ICMP
	// in is not pinged from the other host, and its own egress reaches
	// a port that allows it.
	closed := overlayPort(netA, 1, "fa:16:3e:a0:00:05", "10.0.0.15")
	closed.Rules = egressAll
	gClosed := staticGuest(t, hosts[1], closed, 1450)
	applyAll(t, hosts, nets, append(ports, closed))
	waitFor(t, "the closed port to reach out across hosts", func() error {
		if !gClosed.pings("10.0.0.11") {
			return fmt.Errorf("10.0.0.15 cannot ping 10.0.0.11")
		}
		return nil
	})
	if gA1.pings("10.0.0.15") {
		t.Fatal("ICMP reached a port whose security groups do not allow it")
	}

	// Deleting a port removes its entries on every host; host2 has no
	// port of A left, so its bridge and VXLAN device go too.
	ports = []tport{a1, a2, b1, b2, b3}
	applyAll(t, hosts, nets, ports)
	for i := 0; i < 2; i++ {
		for _, e := range fdbOf(t, hosts[i].ns, VXLANName(netA.ID)) {
			if e == a3.MAC+" 10.99.0.3" || e == "00:00:00:00:00:00 10.99.0.3" {
				t.Fatalf("host%d kept %s after the port's delete", i, e)
			}
		}
	}
	if linkInfo(t, hosts[2].ns, VXLANName(netA.ID)) != nil || linkInfo(t, hosts[2].ns, BridgeName(netA.ID)) != nil {
		t.Fatal("host2 kept network A's devices")
	}
	if gA1.pings("10.0.0.13") {
		t.Fatal("the deleted port is still reachable")
	}

	// A port created on host2 is reachable from host0 once every host
	// applied the state.
	a4 := overlayPort(netA, 2, "fa:16:3e:a0:00:04", "10.0.0.14")
	staticGuest(t, hosts[2], a4, 1450)
	start := time.Now()
	ports = append(ports, a4)
	applyAll(t, hosts, nets, ports)
	applied := time.Since(start)
	waitFor(t, "the new port to be reachable", func() error {
		if !gA1.pings("10.0.0.14") {
			return fmt.Errorf("no answer from 10.0.0.14")
		}
		return nil
	})
	t.Logf("port create to reachable across hosts: %v (apply on 3 hosts %v)", time.Since(start).Round(time.Millisecond),
		applied.Round(time.Millisecond))

	// A restarted plane finds stray and missing entries and repairs
	// them; a VXLAN device it did not make stays.
	h0 := hosts[0]
	dev := VXLANName(netA.ID)
	sh(t, h0.ns, "bridge", "fdb", "append", "00:00:00:00:00:00", "dev", dev, "dst", "10.99.0.99")
	sh(t, h0.ns, "bridge", "fdb", "del", a2.MAC, "dev", dev, "dst", "10.99.0.2")
	sh(t, h0.ns, "ip", "neigh", "replace", "10.0.0.99", "lladdr", "fa:16:3e:ff:ff:ff", "dev", dev, "nud", "permanent")
	sh(t, h0.ns, "ip", "link", "add", "vx-foreign", "type", "vxlan", "id", "7", "dstport", "4789", "local", h0.vtep)
	restarted, err := New(Config{Owner: h0.id, StateDir: t.TempDir(), Netns: h0.ns, TunnelIP: h0.vtep})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, restarted, desiredOf(hosts, 0, nets, ports))
	wantA := sortedUnique([]string{"00:00:00:00:00:00 10.99.0.2", "00:00:00:00:00:00 10.99.0.3", a2.MAC + " 10.99.0.2", a4.MAC + " 10.99.0.3"})
	if got := fdbOf(t, h0.ns, dev); !reflect.DeepEqual(got, wantA) {
		t.Fatalf("after restart: fdb %q, want %q", got, wantA)
	}
	if out := sh(t, h0.ns, "ip", "neigh", "show", "dev", dev); strings.Contains(out, "10.0.0.99") {
		t.Fatalf("stray neighbour entry kept: %s", out)
	}
	if linkInfo(t, h0.ns, "vx-foreign") == nil {
		t.Fatal("the plane removed a VXLAN device it did not make")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := restarted.Teardown(ctx); err != nil {
		t.Fatal(err)
	}
	if linkInfo(t, h0.ns, dev) != nil || linkInfo(t, h0.ns, "vx-foreign") == nil {
		t.Fatal("teardown removed the wrong VXLAN devices")
	}
}
