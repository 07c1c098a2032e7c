package dataplane

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

func intp(v int) *int { return &v }

// egressAll are a default group's egress rules.
var egressAll = []Rule{{Direction: "egress", EtherType: "IPv4", AnyRemote: true}, {Direction: "egress", EtherType: "IPv6", AnyRemote: true}}

// newTestPlane is a plane working in its own host netns.
func newTestPlane(t *testing.T) (*Plane, string) {
	t.Helper()
	hostNS := newNetns(t, "h")
	p, err := New(Config{Owner: "test-" + randHex(6), StateDir: t.TempDir(), Netns: hostNS})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := p.Teardown(ctx); err != nil {
			t.Errorf("teardown: %v", err)
		}
	})
	return p, hostNS
}

func apply(t *testing.T, p *Plane, d *Desired) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := p.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
}

// linkInfo reads a link in a netns, nil when it does not exist.
func linkInfo(t *testing.T, ns, dev string) *ipLink {
	t.Helper()
	out, err := tryIn(ns, 30*time.Second, "ip", "-j", "link", "show", "dev", dev)
	if err != nil {
		return nil
	}
	var links []ipLink
	if err := json.Unmarshal([]byte(out), &links); err != nil || len(links) != 1 {
		t.Fatalf("ip link show %s: %v %s", dev, err, out)
	}
	return &links[0]
}

// TestPlaneBridgesDHCPAndSecurityGroups wires a network with two ports
// in a namespace of its own, two more namespaces standing in for the
// guests: the bridge and taps are there, dnsmasq gives each guest its
// port's address, the lease is read back, security group rules block
// and allow, anti-spoofing drops a forged source, and everything goes
// when the ports and the network do.
func TestPlaneBridgesDHCPAndSecurityGroups(t *testing.T) {
	requireNetTools(t)
	p, hostNS := newTestPlane(t)
	netID, p1ID, p2ID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	subnet := Subnet{ID: uuid.NewString(), IPVersion: 4, CIDR: "10.77.0.0/24", GatewayIP: "10.77.0.1", DHCP: true,
		DNS: []string{"10.77.0.1"}}
	web := append([]Rule{
		{Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortMin: intp(22), PortMax: intp(22), AnyRemote: true},
		{Direction: "ingress", EtherType: "IPv4", Protocol: "icmp", Remotes: []string{"10.77.0.0/24"}},
	}, egressAll...)
	d := &Desired{
		Networks: []Network{{ID: netID, MTU: 1450, Subnets: []Subnet{subnet}}},
		Ports: []Port{
			{ID: p1ID, NetworkID: netID, MAC: "fa:16:3e:00:00:01", IPs: []string{"10.77.0.5"}, PortSecurity: true, Rules: egressAll},
			{ID: p2ID, NetworkID: netID, MAC: "fa:16:3e:00:00:02", IPs: []string{"10.77.0.6"}, PortSecurity: true, Rules: web,
				Hostname: "vm2"},
		},
	}
	g1 := newGuest(t, hostNS, p1ID, "fa:16:3e:00:00:01")
	g2 := newGuest(t, hostNS, p2ID, "fa:16:3e:00:00:02")
	apply(t, p, d)
	apply(t, p, d) // idempotent

	br := linkInfo(t, hostNS, BridgeName(netID))
	if br == nil || br.IfAlias != p.alias() || br.MTU != 1450 {
		t.Fatalf("bridge %s: %+v", BridgeName(netID), br)
	}
	for _, id := range []string{p1ID, p2ID} {
		if tap := linkInfo(t, hostNS, TapName(id)); tap == nil || tap.Master != BridgeName(netID) {
			t.Fatalf("tap of port %s not on the bridge: %+v", id, tap)
		}
	}

	for g, want := range map[*guest]string{g1: "10.77.0.5", g2: "10.77.0.6"} {
		got, err := g.dhcp()
		if err != nil || got != want {
			log, _ := os.ReadFile(filepath.Join(p.dhcpDir(netID), "log"))
			t.Fatalf("DHCP in %s: got %q, %v; want %s\ndnsmasq log:\n%s", g.ns, got, err, want, log)
		}
		if got := g.mtu(); got != "1450" {
			t.Fatalf("DHCP in %s advertised MTU %q, want 1450", g.ns, got)
		}
	}
	waitFor(t, "both leases", func() error {
		leases, err := p.Leases()
		if err != nil {
			return err
		}
		if len(leases) != 2 || leases[0].IP != map[bool]string{true: "10.77.0.5", false: "10.77.0.6"}[leases[0].PortID == p1ID] {
			return fmt.Errorf("leases %+v", leases)
		}
		for _, l := range leases {
			if l.PortID == p2ID && (l.MAC != "fa:16:3e:00:00:02" || l.NetworkID != netID) {
				return fmt.Errorf("lease %+v", l)
			}
		}
		return nil
	})

	// Security groups: g2 allows ssh from anywhere and ping from the
	// subnet; g1 allows nothing in.
	g2.listen(t, 22)
	g2.listen(t, 23)
	g1.listen(t, 22)
	waitFor(t, "ssh to g2 allowed", func() error {
		if !g1.connects("10.77.0.6", 22) {
			return fmt.Errorf("refused")
		}
		return nil
	})
	if !g1.pings("10.77.0.6") {
		t.Fatal("ping g1→g2 is blocked; the rule allows it")
	}
	if g1.connects("10.77.0.6", 23) {
		t.Fatal("port 23 of g2 is reachable without a rule")
	}
	if g2.connects("10.77.0.5", 22) || g2.pings("10.77.0.5") {
		t.Fatal("g1 is reachable without an ingress rule")
	}

	// A rule for 23 opens it.
	d.Ports[1].Rules = append(d.Ports[1].Rules, Rule{Direction: "ingress", EtherType: "IPv4", Protocol: "tcp",
		PortMin: intp(23), PortMax: intp(23), Remotes: []string{"10.77.0.5"}})
	apply(t, p, d)
	if !g1.connects("10.77.0.6", 23) {
		t.Fatal("port 23 of g2 is blocked after its rule was added")
	}

	// A forged source address is dropped at the tap.
	sh(t, g1.ns, "ip", "addr", "add", "10.77.0.99/24", "dev", "eth0")
	if _, err := tryIn(g1.ns, 30*time.Second, "nc", "-z", "-w", "3", "-s", "10.77.0.99", "10.77.0.6", "22"); err == nil {
		t.Fatal("a forged source address got through")
	}

	// Port security off: everything passes.
	d.Ports[0].PortSecurity = false
	apply(t, p, d)
	if !g2.connects("10.77.0.5", 22) {
		t.Fatal("g1 is blocked with port security off")
	}

	// Ports and network gone: dnsmasq, its files and the bridge go.
	pidFile := filepath.Join(p.dhcpDir(netID), "pid")
	if p.dnsmasqPID(netID) == 0 {
		t.Fatal("no dnsmasq runs for the network")
	}
	apply(t, p, &Desired{})
	if linkInfo(t, hostNS, BridgeName(netID)) != nil {
		t.Fatal("the bridge outlived its network")
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Fatalf("dnsmasq files outlived the network: %v", err)
	}
	rules := sh(t, hostNS, "nft", "list", "ruleset")
	if strings.Contains(rules, chainID(p1ID)) {
		t.Fatalf("rules of a removed port remain:\n%s", rules)
	}
}

// TestPlaneRestartAdoptsAndCleansUp applies with one plane, then with a
// new plane on the same state dir (an agent restart): the running
// dnsmasq is kept, a network no port needs any more is removed, and a
// bridge that is not the plane's is left alone.
func TestPlaneRestartAdoptsAndCleansUp(t *testing.T) {
	requireNetTools(t)
	p, hostNS := newTestPlane(t)
	keep, drop := uuid.NewString(), uuid.NewString()
	d := &Desired{Networks: []Network{
		{ID: keep, Subnets: []Subnet{{ID: "s1", IPVersion: 4, CIDR: "10.78.0.0/24", GatewayIP: "10.78.0.1", DHCP: true}}},
		{ID: drop, Subnets: []Subnet{{ID: "s2", IPVersion: 4, CIDR: "10.79.0.0/24", GatewayIP: "10.79.0.1", DHCP: true}}},
	}}
	apply(t, p, d)
	sh(t, hostNS, "ip", "link", "add", "brqforeign", "type", "bridge")
	pid := p.dnsmasqPID(keep)
	if pid == 0 || p.dnsmasqPID(drop) == 0 {
		t.Fatal("dnsmasq not running")
	}

	again, err := New(p.cfg)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, again, &Desired{Networks: d.Networks[:1]})
	if got := again.dnsmasqPID(keep); got != pid {
		t.Fatalf("dnsmasq of the kept network restarted: pid %d, was %d", got, pid)
	}
	if again.dnsmasqPID(drop) != 0 || linkInfo(t, hostNS, BridgeName(drop)) != nil {
		t.Fatal("the dropped network's dnsmasq or bridge remains")
	}
	if linkInfo(t, hostNS, "brqforeign") == nil {
		t.Fatal("a bridge the plane did not make was removed")
	}
	if got := sh(t, hostNS, "ip", "-j", "addr", "show", "dev", BridgeName(keep)); !strings.Contains(got, "10.78.0.1") {
		t.Fatalf("bridge address: %s", got)
	}
}

// TestRenderedRulesetsLoad checks that nft accepts every kind of rule
// the renderer writes (protocols, ICMP types, port ranges, remote
// groups, IPv6, allowed address pairs, floating IPs, SNAT, metadata).
func TestRenderedRulesetsLoad(t *testing.T) {
	requireNetTools(t)
	p, _ := newTestPlane(t)
	netID, extID := uuid.NewString(), uuid.NewString()
	rules := []Rule{
		{Direction: "ingress", EtherType: "IPv4", Protocol: "udp", PortMin: intp(1000), PortMax: intp(2000), AnyRemote: true},
		{Direction: "ingress", EtherType: "IPv4", Protocol: "icmp", PortMin: intp(8), PortMax: intp(0), AnyRemote: true},
		{Direction: "ingress", EtherType: "IPv6", Protocol: "icmp", AnyRemote: true},
		{Direction: "ingress", EtherType: "IPv6", Protocol: "tcp", PortMin: intp(80), Remotes: []string{"fd00::/64"}},
		{Direction: "ingress", EtherType: "IPv4", Protocol: "112", AnyRemote: true},
		{Direction: "ingress", EtherType: "IPv4", Protocol: "gre", Remotes: []string{"10.80.0.7", "10.80.0.8"}},
		{Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", Remotes: nil}, // an empty remote group
		{Direction: "egress", EtherType: "IPv4", Protocol: "tcp", PortMin: intp(443), PortMax: intp(443), Remotes: []string{"0.0.0.0/0"}},
	}
	d := &Desired{
		Networks: []Network{
			{ID: netID, Subnets: []Subnet{
				{ID: "v4", IPVersion: 4, CIDR: "10.80.0.0/24", GatewayIP: "10.80.0.1", DHCP: true,
					Routes: []structs.HostRoute{{Destination: "192.168.9.0/24", NextHop: "10.80.0.254"}}},
				{ID: "v6", IPVersion: 6, CIDR: "fd00::/64", GatewayIP: "fd00::1", DHCP: true, IPv6AddressMode: "dhcpv6-stateful"},
			}},
			{ID: extID, External: true, Subnets: []Subnet{{ID: "ext", IPVersion: 4, CIDR: "172.31.9.0/24"}},
				Addresses: []string{"172.31.9.2/24", "172.31.9.10/32"}},
		},
		Ports: []Port{{ID: uuid.NewString(), NetworkID: netID, MAC: "fa:16:3e:00:00:09", IPs: []string{"10.80.0.5", "fd00::5"},
			PortSecurity: true, Rules: rules,
			AllowedPairs: []structs.AddressPair{{IPAddress: "10.80.0.128/25", MACAddress: "fa:16:3e:00:00:0a"}}}},
		FloatingIPs: []FloatingIP{{Address: "172.31.9.10", FixedIP: "10.80.0.5", ExternalNetworkID: extID}},
	}
	d.Routers = []Router{{ID: "r1", Interfaces: []RouterInterface{{NetworkID: netID, CIDR: "10.80.0.0/24"}},
		ExternalNetworkID: extID, GatewayIP: "172.31.9.2", SNAT: true, SNATHostID: p.cfg.Owner}}
	apply(t, p, d)
	ruleset := sh(t, p.cfg.Netns, "nft", "list", "ruleset")
	for _, want := range []string{"dnat to 10.80.0.5", "snat to 172.31.9.10", "snat to 172.31.9.2",
		"169.254.169.254", "dport 1000-2000", "fd00::/64"} {
		if !strings.Contains(ruleset, want) {
			t.Errorf("ruleset lacks %q:\n%s", want, ruleset)
		}
	}
	if p.dnsmasqPID(extID) != 0 {
		t.Error("dnsmasq runs on the external network")
	}
}

// TestPlaneFloatingIPAndMetadata checks the NAT: from a namespace on
// the external network, a floating IP reaches its port (DNAT), the
// guest reaches the outside from its floating IP (SNAT: the outside
// has no route back to the fixed address), and the guest's requests to
// 169.254.169.254:80 reach the metadata listener on the host.
func TestPlaneFloatingIPAndMetadata(t *testing.T) {
	requireNetTools(t)
	p, hostNS := newTestPlane(t)
	netID, extID, portID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	rules := append([]Rule{{Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortMin: intp(22), PortMax: intp(22), AnyRemote: true}},
		egressAll...)
	d := &Desired{
		Networks: []Network{
			{ID: netID, Subnets: []Subnet{{ID: "s1", IPVersion: 4, CIDR: "10.82.0.0/24", GatewayIP: "10.82.0.1", DHCP: true}}},
			{ID: extID, External: true, Subnets: []Subnet{{ID: "ext", IPVersion: 4, CIDR: "172.30.9.0/24"}},
				Addresses: []string{"172.30.9.2/24", "172.30.9.10/32"}},
		},
		Ports:       []Port{{ID: portID, NetworkID: netID, MAC: "fa:16:3e:00:01:01", IPs: []string{"10.82.0.5"}, PortSecurity: true, Rules: rules}},
		FloatingIPs: []FloatingIP{{Address: "172.30.9.10", FixedIP: "10.82.0.5", PortID: portID, ExternalNetworkID: extID}},
	}
	d.Routers = []Router{{ID: "r1", Interfaces: []RouterInterface{{NetworkID: netID, CIDR: "10.82.0.0/24"}},
		ExternalNetworkID: extID, GatewayIP: "172.30.9.2", SNAT: true, SNATHostID: p.cfg.Owner}}
	g := newGuest(t, hostNS, portID, "fa:16:3e:00:01:01")
	apply(t, p, d)
	if got, err := g.dhcp(); err != nil || got != "10.82.0.5" {
		t.Fatalf("DHCP: %q, %v", got, err)
	}

	// The outside: a namespace on the external bridge, without a route
	// to the tenant network.
	outside := newNetns(t, "o")
	sh(t, hostNS, "ip", "link", "add", "ext0", "type", "veth", "peer", "name", "eth0", "netns", outside)
	sh(t, hostNS, "ip", "link", "set", "ext0", "master", BridgeName(extID), "up")
	sh(t, outside, "ip", "addr", "add", "172.30.9.100/24", "dev", "eth0")
	sh(t, outside, "ip", "link", "set", "eth0", "up")
	out := &guest{ns: outside}

	g.listen(t, 22)
	waitFor(t, "the floating IP reaching the guest", func() error {
		if !out.connects("172.30.9.10", 22) {
			return fmt.Errorf("refused")
		}
		return nil
	})
	if out.connects("10.82.0.5", 22) {
		t.Fatal("the fixed address is reachable from outside")
	}
	out.listen(t, 8080)
	if !g.connects("172.30.9.100", 8080) {
		t.Fatal("the guest cannot reach the outside through its floating IP")
	}

	// Metadata: the host listens on 8775; the guest asks 169.254.169.254.
	host := &guest{ns: hostNS}
	host.listen(t, DefaultMetadataPort)
	if !g.connects("169.254.169.254", 80) {
		t.Fatal("169.254.169.254:80 does not reach the metadata listener")
	}
}
