package server

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestPortBindingCarriesTunnelEndpoint: a host registers its tunnel
// endpoint, and a network's port list tells every reader the id and
// endpoint of the host each instance port is bound to (what the other
// hosts' dataplanes program their VXLAN forwarding entries from); a
// registration with an endpoint that is not a unicast address is
// refused.
func TestPortBindingCarriesTunnelEndpoint(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	tunnels := map[string]string{"h1": "192.0.2.11", "h2": "192.0.2.12"}
	for id, ip := range tunnels {
		h := testHost(id, 8, 16384)
		h.TunnelIP = ip
		registerHost(t, s, h)
	}
	bad := testHost("h3", 8, 16384)
	bad.TunnelIP = "224.0.0.5"
	if err := s.RPC("Host.Register", &structs.HostRegisterRequest{Host: bad}, &structs.HostRegisterResponse{}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("multicast tunnel endpoint: %v", err)
	}
	netID, _ := tenantNetwork(t, s, "p1", "10.30.0.0/24")
	var resp structs.InstanceCreateResponse
	if err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "vm", FlavorID: "m1.small", ImageID: "cirros",
		Count: 2, ProjectID: "p1", NetworksMode: structs.NetworksList,
		Networks: []*structs.InstanceNetworkRequest{{NetworkID: netID}}}, &resp); err != nil {
		t.Fatal(err)
	}
	insts := waitSettled(t, s, ids(&resp))
	var out structs.NetListResponse
	if err := s.RPC("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, NetworkID: netID,
		Caller: structs.NetCaller{Admin: true}}, &out); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, p := range out.Ports {
		if !p.IsCompute() {
			continue
		}
		b, inst := out.Bindings[p.ID], insts[p.DeviceID]
		if b == nil || inst == nil || b.HostID != inst.HostID || b.TunnelIP != tunnels[inst.HostID] || b.HostName != "hv-"+inst.HostID {
			t.Fatalf("port %s of %+v: binding %+v", p.ID, inst, b)
		}
		seen++
	}
	if seen != 2 {
		t.Fatalf("%d instance ports, want 2", seen)
	}
}
