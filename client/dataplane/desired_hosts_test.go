package dataplane

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

// TestBuildDesiredAcrossHosts reads two hosts' desired states from a
// real server (no dataplane is applied, so it needs no root): each sees
// the other's port of the tenant network with the other's tunnel
// endpoint; the router's SNAT and gateway address are on exactly one
// of them, the elected one; the floating IP is NATed by the host of its
// port, which routes the external subnet on-link when it does not hold
// the gateway.
func TestBuildDesiredAcrossHosts(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "00000000-0000-0000-0000-0000000000da")
	hosts := []*vtepHost{{vtep: "192.0.2.1"}, {vtep: "192.0.2.2"}}
	clients := startClients(t, srv, hosts)
	public, private, router, ports, fip := routedTenant(t, srv, clients)

	var ds []*Desired
	waitFor(t, "both hosts to see each other's port", func() error {
		ds = ds[:0]
		for i, c := range clients {
			d, err := BuildDesired(srv, c.HostID())
			if err != nil {
				return err
			}
			other := 1 - i
			if len(d.Remote) != 1 || d.Remote[0].ID != ports[other].ID || d.Remote[0].TunnelIP != hosts[other].vtep ||
				d.Remote[0].HostID != clients[other].HostID() || d.Remote[0].MAC != ports[other].MACAddress {
				return fmt.Errorf("host %d's remote ports %+v", i, d.Remote)
			}
			ds = append(ds, d)
		}
		return nil
	})
	if n := ds[0].network(private.ID); n == nil || n.Type != structs.NetTypeVXLAN || n.SegmentationID == 0 {
		t.Fatalf("tenant network %+v", n)
	}
	elected := electHost(router.ID, []string{clients[0].HostID(), clients[1].HostID()})
	for i, d := range ds {
		mine := clients[i].HostID() == elected
		ext := d.network(public.ID)
		if len(d.Routers) != 1 || d.Routers[0].ID != router.ID || !d.Routers[0].SNAT || d.Routers[0].SNATHostID != elected ||
			len(d.Routers[0].Interfaces) != 1 || d.Routers[0].Interfaces[0].CIDR != "10.0.0.0/24" {
			t.Fatalf("host %d's routers %+v", i, d.Routers)
		}
		if want := hosts[electedIndex(clients, elected)].vtep; d.Routers[0].SNATTunnelIP != want {
			t.Fatalf("host %d: SNAT host's endpoint %q, want %q", i, d.Routers[0].SNATTunnelIP, want)
		}
		if got := d.Routers[0].GatewayIP != ""; got != mine {
			t.Fatalf("host %d (elected %v) holds the gateway %q", i, mine, d.Routers[0].GatewayIP)
		}
		if mine && (ext == nil || ext.OnLink != nil || len(ext.Addresses) == 0) {
			t.Fatalf("elected host %d's external network %+v", i, ext)
		}
		if !mine && i == 0 && ext != nil {
			t.Fatalf("host 0 holds the external network without SNAT or floating IPs: %+v", ext)
		}
	}
	ext := ds[1].network(public.ID)
	if ext == nil || len(ds[1].FloatingIPs) != 1 || ds[1].FloatingIPs[0].Address != fip.FloatingIPAddress {
		t.Fatalf("host 1's floating IPs %+v, external network %+v", ds[1].FloatingIPs, ext)
	}
	if clients[1].HostID() != elected && !reflect.DeepEqual(ext.OnLink, []string{"172.24.4.0/24"}) {
		t.Fatalf("host 1 holds only the floating IP: on-link %v, addresses %v", ext.OnLink, ext.Addresses)
	}
	if len(ds[0].FloatingIPs) != 0 {
		t.Fatalf("host 0 NATs another host's floating IP: %+v", ds[0].FloatingIPs)
	}
}

// electedIndex is the index of the client of a host id.
func electedIndex(clients []*client.Client, hostID string) int {
	for i, c := range clients {
		if c.HostID() == hostID {
			return i
		}
	}
	return -1
}

// routedTenant makes a flat external network, a tenant network behind
// a router with SNAT, an instance with a port on it on each host, and a
// floating IP for the second host's port.
func routedTenant(t *testing.T, srv *server.Server, clients []*client.Client) (public, private *structs.Network,
	router *structs.Router, ports []*structs.Port, fip *structs.FloatingIP) {
	t.Helper()
	admin := structs.NetCaller{ProjectID: "p1", Admin: true}
	mk := func(req *structs.NetWriteRequest) *structs.NetWriteResponse {
		t.Helper()
		req.Caller = admin
		var out structs.NetWriteResponse
		if err := srv.RPC("Net.Create", req, &out); err != nil {
			t.Fatalf("create %s: %v", req.Kind, err)
		}
		return &out
	}
	public = mk(&structs.NetWriteRequest{Kind: structs.NetKindNetwork, Network: &structs.Network{Name: "public", External: true,
		AdminStateUp: true, NetworkType: structs.NetTypeFlat, PhysicalNetwork: "physnet1"}}).Networks[0]
	mk(&structs.NetWriteRequest{Kind: structs.NetKindSubnet, Subnet: &structs.Subnet{NetworkID: public.ID, CIDR: "172.24.4.0/24", IPVersion: 4}})
	private = mk(&structs.NetWriteRequest{Kind: structs.NetKindNetwork, Network: &structs.Network{Name: "private", AdminStateUp: true}}).Networks[0]
	sub := mk(&structs.NetWriteRequest{Kind: structs.NetKindSubnet, Subnet: &structs.Subnet{NetworkID: private.ID, CIDR: "10.0.0.0/24",
		IPVersion: 4, EnableDHCP: true}}).Subnets[0]
	router = mk(&structs.NetWriteRequest{Kind: structs.NetKindRouter, Router: &structs.Router{Name: "r1", AdminStateUp: true,
		Gateway: &structs.RouterGateway{NetworkID: public.ID, EnableSNAT: true}}}).Routers[0]
	if err := srv.RPC("Net.RouterInterface", &structs.RouterInterfaceRequest{RouterID: router.ID, SubnetID: sub.ID, Caller: admin},
		&structs.RouterInterfaceResponse{}); err != nil {
		t.Fatal(err)
	}
	for i, c := range clients {
		p := mk(&structs.NetWriteRequest{Kind: structs.NetKindPort, Port: &structs.Port{NetworkID: private.ID, AdminStateUp: true}}).Ports[0]
		ports = append(ports, p)
		var created structs.InstanceCreateResponse
		if err := srv.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: fmt.Sprint("vm", i), FlavorID: "m1.tiny",
			ImageID: "cirros", ProjectID: "p1", NetworksMode: structs.NetworksList, TargetHost: c.HostID(),
			Networks: []*structs.InstanceNetworkRequest{{PortID: p.ID}}}, &created); err != nil {
			t.Fatal(err)
		}
	}
	fip = mk(&structs.NetWriteRequest{Kind: structs.NetKindFloatingIP, FloatingIP: &structs.FloatingIP{FloatingNetworkID: public.ID,
		PortID: ports[1].ID}}).FloatingIPs[0]

	return public, private, router, ports, fip
}
