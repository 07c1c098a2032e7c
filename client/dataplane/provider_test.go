package dataplane

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

// requireVLAN skips the test when the kernel cannot make 802.1Q
// sub-interfaces (no 8021q); with STRATUS_REQUIRE_VLAN=1 it fails instead.
func requireVLAN(t *testing.T) {
	t.Helper()
	ns := newNetns(t, "v")
	sh(t, ns, "ip", "link", "add", "probe0", "type", "veth", "peer", "name", "probe1")
	if _, err := tryIn(ns, 30*time.Second, "ip", "link", "add", "link", "probe0", "name", "probe0.5", "type", "vlan", "id", "5"); err != nil {
		// A kernel feature, not a package the project's scripts could
		// install: CI machines whose kernel lacks it (such as the
		// sandboxed kernels this project's CI runs on) cannot prove the
		// VLAN path, so it is skipped loudly unless an operator's CI
		// demands it with STRATUS_REQUIRE_VLAN=1.
		msg := fmt.Sprintf("VLAN provider networks need the kernel's 802.1Q support (8021q), which this kernel lacks: %v", err)
		if os.Getenv("STRATUS_REQUIRE_VLAN") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// providerNet is a flat or VLAN network on physnet1 on 10.0.0.0/24.
func providerNet(typ string, vid int) Network {
	return Network{ID: uuid.NewString(), MTU: 1500, Type: typ, SegmentationID: vid, PhysicalNetwork: "physnet1",
		Subnets: []Subnet{{ID: uuid.NewString(), IPVersion: 4, CIDR: "10.0.0.0/24", GatewayIP: "10.0.0.1"}}}
}

// TestFlatProviderNetworkAcrossHosts: a flat provider network on
// physical network physnet1 (each host's eth1, on an L2 the operator
// brings) spans hosts through eth1 on its bridge, with no VXLAN device;
// the network leaving a host releases eth1 and leaves it in place.
func TestFlatProviderNetworkAcrossHosts(t *testing.T) {
	requireNetTools(t)
	hosts := newUnderlayWith(t, 2, true)
	flat := providerNet(structs.NetTypeFlat, 0)
	nets := []Network{flat}
	f1 := overlayPort(flat, 0, "fa:16:3e:f0:00:01", "10.0.0.31")
	f2 := overlayPort(flat, 1, "fa:16:3e:f0:00:02", "10.0.0.32")
	gF1 := staticGuest(t, hosts[0], f1, 1500)
	staticGuest(t, hosts[1], f2, 1500)
	applyAll(t, hosts, nets, []tport{f1, f2})
	applyAll(t, hosts, nets, []tport{f1, f2})
	for _, h := range hosts {
		if l := linkInfo(t, h.ns, "eth1"); l == nil || l.Master != BridgeName(flat.ID) {
			t.Fatalf("%s: eth1 %+v not on the flat network's bridge", h.id, l)
		}
		if linkInfo(t, h.ns, VXLANName(flat.ID)) != nil {
			t.Fatalf("%s: a flat network got a VXLAN device", h.id)
		}
	}
	waitFor(t, "the flat network's guests to reach each other", func() error {
		if !gF1.pings("10.0.0.32") {
			return fmt.Errorf("no answer from 10.0.0.32")
		}
		return nil
	})
	applyAll(t, hosts, nets, []tport{f1})
	if l := linkInfo(t, hosts[1].ns, "eth1"); l == nil || l.Master != "" {
		t.Fatalf("host1's eth1 after the network left: %+v", l)
	}
}

// TestVLANProviderNetworkAcrossHosts: two VLAN provider networks on
// physnet1 with the same CIDR get sub-interfaces eth1.<vid> the plane
// makes (and marks); guests of each reach each other across hosts and
// not the other network's; a network leaving the host takes its
// sub-interface along and leaves eth1 alone.
func TestVLANProviderNetworkAcrossHosts(t *testing.T) {
	requireNetTools(t)
	requireVLAN(t)
	hosts := newUnderlayWith(t, 2, true)
	v101, v102 := providerNet(structs.NetTypeVLAN, 101), providerNet(structs.NetTypeVLAN, 102)
	nets := []Network{v101, v102}
	a1 := overlayPort(v101, 0, "fa:16:3e:f1:00:01", "10.0.0.41")
	a2 := overlayPort(v101, 1, "fa:16:3e:f1:00:02", "10.0.0.42")
	b1 := overlayPort(v102, 0, "fa:16:3e:f2:00:01", "10.0.0.41")
	b2 := overlayPort(v102, 1, "fa:16:3e:f2:00:02", "10.0.0.52")
	ports := []tport{a1, a2, b1, b2}
	gA1, gB1 := staticGuest(t, hosts[0], a1, 1500), staticGuest(t, hosts[0], b1, 1500)
	staticGuest(t, hosts[1], a2, 1500)
	staticGuest(t, hosts[1], b2, 1500)
	applyAll(t, hosts, nets, ports)
	applyAll(t, hosts, nets, ports)
	for _, h := range hosts {
		if l := linkInfo(t, h.ns, "eth1.101"); l == nil || l.Master != BridgeName(v101.ID) || l.IfAlias != h.plane.alias() {
			t.Fatalf("%s: eth1.101 %+v", h.id, l)
		}
	}
	waitFor(t, "each VLAN network's guests to reach each other", func() error {
		for g, a := range map[*guest]string{gA1: "10.0.0.42", gB1: "10.0.0.52"} {
			if !g.pings(a) {
				return fmt.Errorf("%s cannot ping %s", g.ns, a)
			}
		}
		return nil
	})
	if gA1.pings("10.0.0.52") {
		t.Fatal("a guest reached the other VLAN network")
	}
	applyAll(t, hosts, nets, []tport{a1, a2, b1})
	if linkInfo(t, hosts[1].ns, "eth1.102") != nil || linkInfo(t, hosts[1].ns, "eth1") == nil {
		t.Fatal("host1's VLAN sub-interface kept or its physical interface removed")
	}
}

// TestUplinkNames: which device a provider network's bridge gets.
func TestUplinkNames(t *testing.T) {
	p, err := New(Config{Owner: "o", StateDir: t.TempDir(), PhysicalInterfaces: map[string]string{"physnet1": "eth1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n           Network
		dev, parent string
	}{
		{providerNet(structs.NetTypeFlat, 0), "eth1", ""},
		{providerNet(structs.NetTypeVLAN, 4094), "eth1.4094", "eth1"},
		{providerNet(structs.NetTypeVLAN, 4095), "", ""},
		{Network{Type: structs.NetTypeFlat, PhysicalNetwork: "physnet2"}, "", ""},
		{Network{Type: structs.NetTypeVXLAN, SegmentationID: 5, PhysicalNetwork: "physnet1"}, "", ""},
	} {
		if dev, parent := p.uplink(&c.n); dev != c.dev || parent != c.parent {
			t.Errorf("%s/%s/%d: uplink %q %q, want %q %q", c.n.Type, c.n.PhysicalNetwork, c.n.SegmentationID, dev, parent, c.dev, c.parent)
		}
	}
}

func TestCheckPhysicalInterfaces(t *testing.T) {
	if err := CheckPhysicalInterfaces(map[string]string{"physnet1": "eth1", "ext": "bond0.5"}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []map[string]string{{"": "eth1"}, {"p": ""}, {"p": "a b"}, {"p": "x/y"}, {"p": strings.Repeat("e", 11)}} {
		if err := CheckPhysicalInterfaces(m); err == nil {
			t.Errorf("%v accepted", m)
		}
	}
	if _, err := New(Config{Owner: "o", StateDir: t.TempDir(), TunnelIP: "0.0.0.0"}); err == nil {
		t.Error("an unspecified tunnel endpoint accepted")
	}
}

// TestValidateRemotePorts: remote ports need a listed network, a MAC,
// addresses and a tunnel endpoint.
func TestValidateRemotePorts(t *testing.T) {
	n := Network{ID: "n1"}
	good := RemotePort{ID: "r", NetworkID: "n1", MAC: "fa:16:3e:00:00:01", IPs: []string{"10.0.0.5"}, TunnelIP: "192.0.2.1"}
	if err := (&Desired{Networks: []Network{n}, Remote: []RemotePort{good}}).Validate(); err != nil {
		t.Fatal(err)
	}
	for _, mod := range []func(*RemotePort){
		func(r *RemotePort) { r.NetworkID = "n2" },
		func(r *RemotePort) { r.MAC = "nope" },
		func(r *RemotePort) { r.IPs = []string{"10.0.0.300"} },
		func(r *RemotePort) { r.TunnelIP = "" },
	} {
		r := good
		mod(&r)
		if err := (&Desired{Networks: []Network{n}, Remote: []RemotePort{r}}).Validate(); err == nil {
			t.Errorf("%+v validated", r)
		}
	}
}
