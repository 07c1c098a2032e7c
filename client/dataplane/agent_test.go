package dataplane

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// TestAgentWiresBoundPortsAndReportsLeases runs a real server and a
// hypervisor agent (fake driver), boots an instance on a tenant network
// and runs the dataplane agent for the host in a namespace: the
// network's bridge appears, a guest namespace with the port's MAC on
// the port's tap gets the port's address from dnsmasq, the lease shows
// up in state (NetLease.List), and detaching the interface removes the
// wiring and the lease.
func TestAgentWiresBoundPortsAndReportsLeases(t *testing.T) {
	requireNetTools(t)
	srv, err := server.NewServer(&server.Config{
		NodeName: "srv", NodeID: "00000000-0000-0000-0000-0000000000d7", DataDir: t.TempDir(),
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
	drv := fake.New(fake.Config{HostName: "hv1"})
	c, err := client.New(client.Config{DataDir: t.TempDir(), NodeName: "hv1", Driver: drv,
		RPC: srv, Logger: hclog.NewNullLogger(), ReportInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start() }()
	t.Cleanup(func() { _ = c.Shutdown() })
	// A create before the host registers would fail with no valid host.
	waitFor(t, "hv1 up", func() error {
		var hosts structs.HostListResponse
		if err := srv.RPC("Host.List", &structs.HostListRequest{}, &hosts); err != nil {
			return err
		}
		if len(hosts.Hosts) != 1 || !hosts.Hosts[0].Up() {
			return fmt.Errorf("hosts %v", hosts.Hosts)
		}
		return nil
	})

	caller := structs.NetCaller{ProjectID: "p1"}
	var netOut, subOut structs.NetWriteResponse
	if err := srv.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Caller: caller,
		Network: &structs.Network{Name: "net1", AdminStateUp: true, PortSecurityEnabled: true}}, &netOut); err != nil {
		t.Fatal(err)
	}
	netID := netOut.Networks[0].ID
	if err := srv.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindSubnet, Caller: caller,
		Fields: []string{"cidr", "ip_version"}, Subnet: &structs.Subnet{NetworkID: netID, CIDR: "10.81.0.0/24",
			IPVersion: 4, EnableDHCP: true}}, &subOut); err != nil {
		t.Fatal(err)
	}
	var created structs.InstanceCreateResponse
	if err := srv.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "vm", FlavorID: "m1.tiny", ImageID: "cirros",
		ProjectID: "p1", NetworksMode: structs.NetworksList,
		Networks: []*structs.InstanceNetworkRequest{{NetworkID: netID}}}, &created); err != nil {
		t.Fatal(err)
	}
	instID := created.Instances[0].ID
	waitFor(t, "instance active", func() error {
		var r structs.SingleInstanceResponse
		if err := srv.RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: instID}, &r); err != nil {
			return err
		}
		if r.Instance.VMState != structs.VMStateActive {
			return fmt.Errorf("vm state %q", r.Instance.VMState)
		}
		return nil
	})
	var ports structs.NetListResponse
	if err := srv.RPC("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, DeviceIDs: []string{instID},
		Caller: structs.NetCaller{Admin: true}}, &ports); err != nil || len(ports.Ports) != 1 {
		t.Fatalf("ports of the instance: %v %d", err, len(ports.Ports))
	}
	port := ports.Ports[0]

	p, hostNS := newTestPlane(t)
	g := newGuest(t, hostNS, port.ID, port.MACAddress)
	a, err := NewAgent(AgentConfig{HostID: c.HostID(), NodeSecret: c.NodeSecret(), RPC: srv, Plane: p, ResyncInterval: 500 * time.Millisecond,
		LeaseInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	t.Cleanup(a.Stop)

	waitFor(t, "the port's tap on the network's bridge", func() error {
		if l := linkInfo(t, hostNS, TapName(port.ID)); l == nil || l.Master != BridgeName(netID) {
			return fmt.Errorf("tap %+v", l)
		}
		if p.dnsmasqPID(netID) == 0 {
			return fmt.Errorf("no dnsmasq")
		}
		return nil
	})
	got, err := g.dhcp()
	if err != nil || got != port.FixedIPs[0].IPAddress {
		t.Fatalf("DHCP: got %q, %v; want %s", got, err, port.FixedIPs[0].IPAddress)
	}
	waitFor(t, "the lease in state", func() error {
		var out structs.NetLeaseListResponse
		if err := srv.RPC("NetLease.List", &structs.NetLeaseListRequest{PortIDs: []string{port.ID}}, &out); err != nil {
			return err
		}
		if len(out.Leases) != 1 {
			return fmt.Errorf("%d leases", len(out.Leases))
		}
		l := out.Leases[0]
		if l.IPAddress != got || l.MACAddress != port.MACAddress || l.HostID != c.HostID() || l.NetworkID != netID || l.ExpiresAt == 0 {
			return fmt.Errorf("lease %+v", l)
		}
		return nil
	})

	// os-interface attach: the hypervisor agent hot-plugs the new port
	// (the fake driver records it); detach unplugs it.
	var att structs.NetWriteResponse
	if err := srv.RPC("Net.AttachInterface", &structs.InterfaceAttachRequest{InstanceID: instID, NetworkID: netID,
		Caller: caller}, &att); err != nil {
		t.Fatal(err)
	}
	extra := att.Ports[0]
	nicsAre := func(want ...string) func() error {
		return func() error {
			spec, err := drv.Spec(instID)
			if err != nil {
				return err
			}
			var got []string
			for _, n := range spec.NICs {
				got = append(got, n.PortID)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("NICs %v, want %v", got, want)
			}
			return nil
		}
	}
	waitFor(t, "the attached port hot-plugged", nicsAre(port.ID, extra.ID))
	for _, id := range []string{port.ID, extra.ID} {
		if err := srv.RPC("Net.DetachInterface", &structs.InterfaceDetachRequest{InstanceID: instID, PortID: id,
			Caller: caller}, &structs.GenericResponse{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "both ports unplugged", nicsAre())
	waitFor(t, "the wiring removed", func() error {
		if linkInfo(t, hostNS, BridgeName(netID)) != nil {
			return fmt.Errorf("bridge still there")
		}
		return nil
	})
	waitFor(t, "the lease released", func() error {
		var out structs.NetLeaseListResponse
		if err := srv.RPC("NetLease.List", &structs.NetLeaseListRequest{HostID: c.HostID()}, &out); err != nil {
			return err
		}
		if len(out.Leases) != 0 {
			return fmt.Errorf("leases %+v", out.Leases)
		}
		return nil
	})
}
