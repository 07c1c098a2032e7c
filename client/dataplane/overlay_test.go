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
	sc := newOverlayScene(t)
	sc.checkFDB(t)
	sc.checkReach(t)
	sc.checkIsolation(t)
	sc.checkSecurityGroups(t)
	sc.checkPortDelete(t)
	sc.measureNewPort(t)
	sc.checkRestart(t)
}

// overlayScene is TestOverlayAcrossHosts's state: three hosts, tenant
// networks A and B (both 10.0.0.0/24), their ports and guests.
type overlayScene struct {
	hosts              []*vtepHost
	netA, netB         Network
	nets               []Network
	a1, a2, a3, b2, b3 tport
	ports              []tport
	gA1, gA2, gA3      *guest
	gB1, gB3           *guest
}

func newOverlayScene(t *testing.T) *overlayScene {
	sc := &overlayScene{hosts: newUnderlay(t, 3), netA: overlayNet(1001), netB: overlayNet(1002)}
	sc.nets = []Network{sc.netA, sc.netB}
	sc.a1 = overlayPort(sc.netA, 0, "fa:16:3e:a0:00:01", "10.0.0.11")
	sc.a2 = overlayPort(sc.netA, 1, "fa:16:3e:a0:00:02", "10.0.0.12")
	sc.a3 = overlayPort(sc.netA, 2, "fa:16:3e:a0:00:03", "10.0.0.13")
	b1 := overlayPort(sc.netB, 0, "fa:16:3e:b0:00:01", "10.0.0.11")
	sc.b2 = overlayPort(sc.netB, 1, "fa:16:3e:b0:00:02", "10.0.0.12")
	sc.b3 = overlayPort(sc.netB, 1, "fa:16:3e:b0:00:03", "10.0.0.21")
	sc.ports = []tport{sc.a1, sc.a2, sc.a3, b1, sc.b2, sc.b3}
	h := sc.hosts
	sc.gA1 = newGuest(t, h[0].ns, sc.a1.ID, sc.a1.MAC)
	sc.gA2, sc.gA3 = staticGuest(t, h[1], sc.a2, 1450), staticGuest(t, h[2], sc.a3, 1450)
	sc.gB1, sc.gB3 = staticGuest(t, h[0], b1, 1450), staticGuest(t, h[1], sc.b3, 1450)
	staticGuest(t, h[1], sc.b2, 1450)
	applyAll(t, h, sc.nets, sc.ports)
	applyAll(t, h, sc.nets, sc.ports) // idempotent
	return sc
}

// checkFDB: each host's forwarding table holds exactly the other hosts'
// ports of its networks and one BUM entry per such host (host0 serves
// both networks, host2 only A).
func (sc *overlayScene) checkFDB(t *testing.T) {
	netA, netB, a1, a2, a3 := sc.netA, sc.netB, sc.a1, sc.a2, sc.a3
	for i, want := range []map[string][]string{
		{netA.ID: {"00:00:00:00:00:00 10.99.0.2", "00:00:00:00:00:00 10.99.0.3", a2.MAC + " 10.99.0.2", a3.MAC + " 10.99.0.3"},
			netB.ID: {"00:00:00:00:00:00 10.99.0.2", sc.b2.MAC + " 10.99.0.2", sc.b3.MAC + " 10.99.0.2"}},
		nil,
		{netA.ID: {"00:00:00:00:00:00 10.99.0.1", "00:00:00:00:00:00 10.99.0.2", a1.MAC + " 10.99.0.1", a2.MAC + " 10.99.0.2"},
			netB.ID: nil},
	} {
		for netID, fdb := range want {
			if got := fdbOf(t, sc.hosts[i].ns, VXLANName(netID)); !reflect.DeepEqual(got, sortedUnique(fdb)) {
				t.Fatalf("host%d %s: fdb %q, want %q", i, VXLANName(netID), got, fdb)
			}
		}
	}
	vx := linkInfo(t, sc.hosts[0].ns, VXLANName(netA.ID))
	if vx == nil || vx.Master != BridgeName(netA.ID) || vx.MTU != 1450 || vx.IfAlias != sc.hosts[0].plane.alias() {
		t.Fatalf("VXLAN device %+v", vx)
	}
}

// checkReach: DHCP is answered by the guest's own host only; guests of
// a network reach each other across hosts, full-size packets at the
// overlay MTU (1450 = 1500 - 50) included.
func (sc *overlayScene) checkReach(t *testing.T) {
	if got, err := sc.gA1.dhcp(); err != nil || got != "10.0.0.11" {
		t.Fatalf("DHCP across the overlay: %q, %v", got, err)
	}
	sh(t, sc.gA1.ns, "ip", "link", "set", "eth0", "mtu", "1450")
	waitFor(t, "A's guests to reach each other across hosts", func() error {
		for g, addrs := range map[*guest][]string{sc.gA1: {"10.0.0.12", "10.0.0.13"}, sc.gA3: {"10.0.0.11", "10.0.0.12"},
			sc.gB1: {"10.0.0.12", "10.0.0.21"}} {
			for _, a := range addrs {
				if !g.pings(a) {
					return fmt.Errorf("%s cannot ping %s", g.ns, a)
				}
			}
		}
		return nil
	})
	if _, err := tryIn(sc.gA1.ns, 30*time.Second, "ping", "-c", "1", "-W", "3", "-M", "do", "-s", "1422", "10.0.0.12"); err != nil {
		t.Fatalf("1450-byte packet across the overlay: %v", err)
	}
}

// checkIsolation: same addresses, other tenant: each resolves to its
// own network's guest, and B's address that A lacks is unreachable
// from A.
func (sc *overlayScene) checkIsolation(t *testing.T) {
	if got := sc.gA1.neighMAC("10.0.0.12"); got != sc.a2.MAC {
		t.Fatalf("A's guest resolved 10.0.0.12 to %q, want %s", got, sc.a2.MAC)
	}
	if got := sc.gB1.neighMAC("10.0.0.12"); got != sc.b2.MAC {
		t.Fatalf("B's guest resolved 10.0.0.12 to %q, want %s", got, sc.b2.MAC)
	}
	if sc.gA1.pings("10.0.0.21") || sc.gB3.pings("10.0.0.13") || sc.gA2.pings("10.0.0.21") {
		t.Fatal("a guest reached the other tenant's network")
	}
}

// checkSecurityGroups: a port whose groups let no ICMP in is not pinged
// from the other host, and its own egress reaches a port that allows
// it.
func (sc *overlayScene) checkSecurityGroups(t *testing.T) {
	closed := overlayPort(sc.netA, 1, "fa:16:3e:a0:00:05", "10.0.0.15")
	closed.Rules = egressAll
	gClosed := staticGuest(t, sc.hosts[1], closed, 1450)
	applyAll(t, sc.hosts, sc.nets, append(sc.ports, closed))
	waitFor(t, "the closed port to reach out across hosts", func() error {
		if !gClosed.pings("10.0.0.11") {
			return fmt.Errorf("10.0.0.15 cannot ping 10.0.0.11")
		}
		return nil
	})
	if sc.gA1.pings("10.0.0.15") {
		t.Fatal("ICMP reached a port whose security groups do not allow it")
	}
}

// checkPortDelete: deleting a port removes its entries on every host;
// host2 has no port of A left, so its bridge and VXLAN device go too.
func (sc *overlayScene) checkPortDelete(t *testing.T) {
	var kept []tport
	for _, p := range sc.ports {
		if p.ID != sc.a3.ID {
			kept = append(kept, p)
		}
	}
	sc.ports = kept
	applyAll(t, sc.hosts, sc.nets, sc.ports)
	for i := 0; i < 2; i++ {
		for _, e := range fdbOf(t, sc.hosts[i].ns, VXLANName(sc.netA.ID)) {
			if e == sc.a3.MAC+" 10.99.0.3" || e == "00:00:00:00:00:00 10.99.0.3" {
				t.Fatalf("host%d kept %s after the port's delete", i, e)
			}
		}
	}
	if linkInfo(t, sc.hosts[2].ns, VXLANName(sc.netA.ID)) != nil || linkInfo(t, sc.hosts[2].ns, BridgeName(sc.netA.ID)) != nil {
		t.Fatal("host2 kept network A's devices")
	}
	if sc.gA1.pings("10.0.0.13") {
		t.Fatal("the deleted port is still reachable")
	}
}

// measureNewPort: a port created on host2 is reachable from host0 once
// every host applied the state; the time is logged.
func (sc *overlayScene) measureNewPort(t *testing.T) {
	a4 := overlayPort(sc.netA, 2, "fa:16:3e:a0:00:04", "10.0.0.14")
	staticGuest(t, sc.hosts[2], a4, 1450)
	start := time.Now()
	sc.ports = append(sc.ports, a4)
	applyAll(t, sc.hosts, sc.nets, sc.ports)
	applied := time.Since(start)
	waitFor(t, "the new port to be reachable", func() error {
		if !sc.gA1.pings("10.0.0.14") {
			return fmt.Errorf("no answer from 10.0.0.14")
		}
		return nil
	})
	t.Logf("port create to reachable across hosts: %v (apply on 3 hosts %v)", time.Since(start).Round(time.Millisecond),
		applied.Round(time.Millisecond))
}

// checkRestart: a restarted plane finds stray and missing entries and
// repairs them; a VXLAN device it did not make stays, through its
// teardown too.
func (sc *overlayScene) checkRestart(t *testing.T) {
	h0 := sc.hosts[0]
	dev := VXLANName(sc.netA.ID)
	sh(t, h0.ns, "bridge", "fdb", "append", "00:00:00:00:00:00", "dev", dev, "dst", "10.99.0.99")
	sh(t, h0.ns, "bridge", "fdb", "del", sc.a2.MAC, "dev", dev, "dst", "10.99.0.2")
	sh(t, h0.ns, "ip", "neigh", "replace", "10.0.0.99", "lladdr", "fa:16:3e:ff:ff:ff", "dev", dev, "nud", "permanent")
	sh(t, h0.ns, "ip", "link", "add", "vx-foreign", "type", "vxlan", "id", "7", "dstport", "4789", "local", h0.vtep)
	restarted, err := New(Config{Owner: h0.id, StateDir: t.TempDir(), Netns: h0.ns, TunnelIP: h0.vtep})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, restarted, desiredOf(sc.hosts, 0, sc.nets, sc.ports))
	want := []string{"00:00:00:00:00:00 10.99.0.2", "00:00:00:00:00:00 10.99.0.3", sc.a2.MAC + " 10.99.0.2"}
	for _, p := range sc.ports {
		if p.NetworkID == sc.netA.ID && p.host == 2 {
			want = append(want, p.MAC+" 10.99.0.3")
		}
	}
	if got := fdbOf(t, h0.ns, dev); !reflect.DeepEqual(got, sortedUnique(want)) {
		t.Fatalf("after restart: fdb %q, want %q", got, sortedUnique(want))
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
