package client

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// TestSpawnWiresTheInstancePorts boots an instance with two NICs on a
// real server and checks the driver was handed its ports, in order, as
// NICs (the fake driver records them), and that the ports are bound to
// the host the instance runs on.
func TestSpawnWiresTheInstancePorts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	s, err := server.NewServer(&server.Config{NodeName: "nics", NodeID: "00000000-0000-0000-0000-00000000c001",
		DataDir: t.TempDir(), BindAddr: "127.0.0.1", BootstrapExpect: 1, GossipFast: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown() })
	until := func(what string, cond func() error) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for err := cond(); err != nil; err = cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v", what, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	until("a leader", func() error {
		if !s.IsLeader() {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	if err := s.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()}, &structs.FlavorUpsertResponse{}); err != nil {
		t.Fatal(err)
	}
	drv := fake.New(fake.Config{HostName: "hv-nics"})
	c, err := New(Config{DataDir: t.TempDir(), NodeName: "hv-nics", Driver: drv, RPC: s, Logger: hclog.NewNullLogger(),
		ReportInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start() }()
	t.Cleanup(func() { _ = c.Shutdown() })

	admin := structs.NetCaller{Admin: true, ProjectID: "p1"}
	var netOut structs.NetWriteResponse
	if err := s.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Caller: admin,
		Network: &structs.Network{Name: "n", AdminStateUp: true, PortSecurityEnabled: true}}, &netOut); err != nil {
		t.Fatal(err)
	}
	n := netOut.Networks[0]
	if err := s.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindSubnet, Caller: admin,
		Subnet: &structs.Subnet{NetworkID: n.ID, CIDR: "10.3.0.0/24", IPVersion: 4}}, &structs.NetWriteResponse{}); err != nil {
		t.Fatal(err)
	}
	var created structs.InstanceCreateResponse
	until("hosts up", func() error {
		return s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "vm", FlavorID: "1", ImageID: "cirros", ProjectID: "p1",
			NetworksMode: structs.NetworksList, Networks: []*structs.InstanceNetworkRequest{{NetworkID: n.ID}, {NetworkID: n.ID, FixedIP: "10.3.0.99"}}},
			&created)
	})
	id := created.Instances[0].ID
	until("spawned", func() error {
		_, err := drv.Spec(id)
		return err
	})
	spec, _ := drv.Spec(id)
	var ports structs.NetListResponse
	if err := s.RPC("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, HostID: c.HostID(), Caller: admin}, &ports); err != nil {
		t.Fatal(err)
	}
	if len(spec.NICs) != 2 || len(ports.Ports) != 2 {
		t.Fatalf("NICs %+v, ports of the host %+v", spec.NICs, ports.Ports)
	}
	for i, nic := range spec.NICs {
		p := ports.Ports[i]
		if nic.PortID != p.ID || nic.MAC != p.MACAddress || nic.NetworkID != n.ID || nic.Bridge != "brq"+n.ID[:11] ||
			len(nic.IPs) != 1 || nic.IPs[0] != p.FixedIPs[0].IPAddress {
			t.Fatalf("NIC %d %+v, port %+v", i, nic, p)
		}
		if b := ports.Bindings[p.ID]; b.HostName != "hv-nics" {
			t.Fatalf("port %s bound to %+v", p.ID, b)
		}
	}
	if spec.NICs[1].IPs[0] != "10.3.0.99" {
		t.Fatalf("second NIC %+v", spec.NICs[1])
	}
}
