package dataplane

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// startServer runs a single bootstrapped server with the dev flavors.
func startServer(t *testing.T, nodeID string) *server.Server {
	t.Helper()
	srv, err := server.NewServer(&server.Config{
		NodeName: "srv", NodeID: nodeID, DataDir: t.TempDir(),
		BindAddr: "127.0.0.1", BootstrapExpect: 1, GossipFast: true, Logger: hclog.NewNullLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown() })
	waitFor(t, "leader", func() error {
		if !srv.IsLeader() {
			return fmt.Errorf("not leader")
		}
		return nil
	})
	if err := srv.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()}, &structs.FlavorUpsertResponse{}); err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestAgentsProgramTheOverlayFromState runs a server, two hypervisor
// agents (fake driver) registering their tunnel endpoints, and a
// dataplane agent per host, each in its own netns on a shared underlay,
// with resync turned off in effect (an hour): only the blocking queries
// drive them. An instance booted on the second host with a port of the
// tenant network is reached from the first host's guest, because the
// first host's agent woke on the other host's port; deleting the
// instance removes its entries there.
func TestAgentsProgramTheOverlayFromState(t *testing.T) {
	requireNetTools(t)
	srv := startServer(t, "00000000-0000-0000-0000-0000000000d8")
	hosts := newUnderlay(t, 2)
	clients := startClients(t, srv, hosts)
	network, ports, guests := tenantWithPorts(t, srv, hosts)
	for i, h := range hosts {
		a, err := NewAgent(AgentConfig{HostID: clients[i].HostID(), NodeSecret: clients[i].NodeSecret(), RPC: srv, Plane: h.plane,
			ResyncInterval: time.Hour, LeaseInterval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		a.Start()
		t.Cleanup(a.Stop)
	}
	boot := func(i int) string {
		var created structs.InstanceCreateResponse
		if err := srv.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: fmt.Sprint("vm", i), FlavorID: "m1.tiny",
			ImageID: "cirros", ProjectID: "p1", NetworksMode: structs.NetworksList, TargetHost: clients[i].HostID(),
			Networks: []*structs.InstanceNetworkRequest{{PortID: ports[i].ID}}}, &created); err != nil {
			t.Fatal(err)
		}
		return created.Instances[0].ID
	}
	boot(0)
	waitFor(t, "the first host's wiring", func() error {
		if l := linkInfo(t, hosts[0].ns, TapName(ports[0].ID)); l == nil || l.Master != BridgeName(network.ID) {
			return fmt.Errorf("tap %+v", l)
		}
		return nil
	})

	start := time.Now()
	vm2 := boot(1)
	ip2 := ports[1].FixedIPs[0].IPAddress
	waitFor(t, "the guest on the other host to be reachable", func() error {
		if !guests[0].pings(ip2) {
			return fmt.Errorf("no answer from %s", ip2)
		}
		return nil
	})
	t.Logf("instance create on host 2 to reachable from host 1 (agents, watches, apply): %v", time.Since(start).Round(time.Millisecond))
	vx := VXLANName(network.ID)
	entry := strings.ToLower(ports[1].MACAddress) + " " + hosts[1].vtep
	if fdb := fdbOf(t, hosts[0].ns, vx); !containsString(fdb, entry) {
		t.Fatalf("host1's fdb %q lacks %s", fdb, entry)
	}

	if err := srv.RPC("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{vm2}, Admin: true}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deleted instance's entries gone from the other host", func() error {
		for _, e := range fdbOf(t, hosts[0].ns, vx) {
			if e == entry || strings.HasSuffix(e, " "+hosts[1].vtep) {
				return fmt.Errorf("entry %s still there", e)
			}
		}
		if linkInfo(t, hosts[1].ns, BridgeName(network.ID)) != nil {
			return fmt.Errorf("host2 still has the network's bridge")
		}
		return nil
	})
}

// startClients runs a hypervisor agent (fake driver) per host,
// registering the host's tunnel endpoint.
func startClients(t *testing.T, srv *server.Server, hosts []*vtepHost) []*client.Client {
	t.Helper()
	var clients []*client.Client
	for i, h := range hosts {
		name := fmt.Sprintf("hv%d", i+1)
		c, err := client.New(client.Config{DataDir: t.TempDir(), NodeName: name, Driver: fake.New(fake.Config{HostName: name}),
			RPC: srv, Logger: hclog.NewNullLogger(), ReportInterval: 20 * time.Millisecond, TunnelIP: h.vtep})
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = c.Start() }()
		t.Cleanup(func() { _ = c.Shutdown() })
		clients = append(clients, c)
	}
	return clients
}

// tenantWithPorts creates a tenant network (VXLAN by default, MTU
// 1450) and one port per host with a guest plugged on that host: the
// ports exist before their instances, so the guests' taps are there
// when the agents first wire them (libvirt would plug them).
func tenantWithPorts(t *testing.T, srv *server.Server, hosts []*vtepHost) (*structs.Network, []*structs.Port, []*guest) {
	t.Helper()
	caller := structs.NetCaller{ProjectID: "p1"}
	var netOut structs.NetWriteResponse
	if err := srv.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Caller: caller,
		Network: &structs.Network{Name: "net1", AdminStateUp: true, PortSecurityEnabled: false}}, &netOut); err != nil {
		t.Fatal(err)
	}
	network := netOut.Networks[0]
	if network.NetworkType != structs.NetTypeVXLAN || network.SegmentationID == 0 || network.MTU != 1450 {
		t.Fatalf("tenant network %+v", network)
	}
	if err := srv.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindSubnet, Caller: caller,
		Fields: []string{"cidr", "ip_version"}, Subnet: &structs.Subnet{NetworkID: network.ID, CIDR: "10.82.0.0/24",
			IPVersion: 4, EnableDHCP: true}}, &structs.NetWriteResponse{}); err != nil {
		t.Fatal(err)
	}
	var ports []*structs.Port
	var guests []*guest
	for i, h := range hosts {
		var out structs.NetWriteResponse
		if err := srv.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindPort, Caller: caller,
			Port: &structs.Port{NetworkID: network.ID, AdminStateUp: true, Name: fmt.Sprint("p", i)}}, &out); err != nil {
			t.Fatal(err)
		}
		p := out.Ports[0]
		ports = append(ports, p)
		guests = append(guests, staticGuest(t, h, tport{Port: Port{ID: p.ID, MAC: p.MACAddress,
			IPs: []string{p.FixedIPs[0].IPAddress}}}, network.MTU))
	}
	return network, ports, guests
}

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// TestAgentWatchesItsNetworksPorts: the agent's blocking query on a
// network it serves kicks an apply when a port of that network changes
// anywhere (another host's port in particular), and stops with the
// network. It needs no root: nothing is applied.
func TestAgentWatchesItsNetworksPorts(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "00000000-0000-0000-0000-0000000000d9")
	caller := structs.NetCaller{ProjectID: "p1"}
	var netOut structs.NetWriteResponse
	if err := srv.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Caller: caller,
		Network: &structs.Network{Name: "net1", AdminStateUp: true}}, &netOut); err != nil {
		t.Fatal(err)
	}
	netID := netOut.Networks[0].ID
	p, err := New(Config{Owner: "watch-test", StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAgent(AgentConfig{HostID: "h1", RPC: srv, Plane: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	a.watchNetworks(&Desired{Ports: []Port{{ID: "x", NetworkID: netID}}})
	// A port created before the watch's first answer is part of its
	// baseline, so ports are created until one kicks (the second at
	// the latest, in practice).
	deadline := time.Now().Add(60 * time.Second)
	for kicked := false; !kicked; {
		if time.Now().After(deadline) {
			t.Fatal("no apply kicked after ports were created on the network")
		}
		if err := srv.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindPort, Caller: caller,
			Port: &structs.Port{NetworkID: netID, AdminStateUp: true}}, &structs.NetWriteResponse{}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-a.kick:
			kicked = true
		case <-time.After(time.Second):
		}
	}
	a.watchNetworks(&Desired{})
	a.watchMu.Lock()
	n := len(a.netWatches)
	a.watchMu.Unlock()
	if n != 0 {
		t.Fatalf("%d watches left after the host left the network", n)
	}
}
