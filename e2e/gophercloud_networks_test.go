package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
)

// serverAddrs is a server's addresses on a network, as "type:addr".
func serverAddrs(s *servers.Server, network string) []string {
	var out []string
	list, _ := s.Addresses[network].([]any)
	for _, a := range list {
		m := a.(map[string]any)
		out = append(out, fmt.Sprint(m["OS-EXT-IPS:type"], ":", m["addr"]))
	}
	return out
}

// TestGophercloudDrivesTheNetworkingAPI finds dev mode's networks as
// Terraform's OpenStack provider does, creates a port, boots servers on
// the network and on the port, and NATs a floating IP to one.
func TestGophercloudDrivesTheNetworkingAPI(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := startAgent(t, "gcnet", "--dev")
	compute, provider := computeClient(t, ctx, dev.http, "demo")
	network, err := openstack.NewNetworkV2(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatalf("network endpoint from the catalog: %v", err)
	}

	// Dev mode's shared network, found by name.
	var private networks.Network
	eventually(t, "private network seeded", 30*time.Second, func() error {
		pages, err := networks.List(network, networks.ListOpts{Name: "private"}).AllPages(ctx)
		if err != nil {
			return err
		}
		all, err := networks.ExtractNetworks(pages)
		if err != nil {
			return err
		}
		if len(all) != 1 {
			return fmt.Errorf("%d networks named private", len(all))
		}
		private = all[0]
		return nil
	})
	if !private.Shared || len(private.Subnets) != 1 || private.Status != "ACTIVE" {
		t.Fatalf("private %+v", private)
	}
	sub, err := subnets.Get(ctx, network, private.Subnets[0]).Extract()
	if err != nil || sub.CIDR != "10.0.0.0/24" || sub.GatewayIP != "10.0.0.1" || !sub.EnableDHCP {
		t.Fatalf("private subnet %+v %v", sub, err)
	}
	pages, err := networks.List(network, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := networks.ExtractNetworks(pages)
	var public string
	for _, n := range all {
		if n.Name == "public" {
			public = n.ID
		}
	}
	if len(all) != 2 || public == "" {
		t.Fatalf("demo's networks %+v", all)
	}

	// A port of demo's on the shared network.
	port, err := ports.Create(ctx, network, ports.CreateOpts{NetworkID: private.ID, Name: "gc-port"}).Extract()
	if err != nil {
		t.Fatalf("port create: %v", err)
	}
	if len(port.FixedIPs) != 1 || !strings.HasPrefix(port.FixedIPs[0].IPAddress, "10.0.0.") || port.FixedIPs[0].SubnetID != sub.ID ||
		!strings.HasPrefix(port.MACAddress, "fa:16:3e:") || len(port.SecurityGroups) != 1 {
		t.Fatalf("port %+v", port)
	}

	// A server on the network, and one on the port.
	onNet, err := servers.Create(ctx, compute, servers.CreateOpts{Name: "gc-net", ImageRef: "cirros", FlavorRef: "1",
		Networks: []servers.Network{{UUID: private.ID}}}, nil).Extract()
	if err != nil {
		t.Fatalf("server create on the network: %v", err)
	}
	onPort, err := servers.Create(ctx, compute, servers.CreateOpts{Name: "gc-port", ImageRef: "cirros", FlavorRef: "1",
		Networks: []servers.Network{{Port: port.ID}}}, nil).Extract()
	if err != nil {
		t.Fatalf("server create on the port: %v", err)
	}
	waitServer(ctx, t, compute, onNet.ID, "ACTIVE")
	s := waitServer(ctx, t, compute, onPort.ID, "ACTIVE")
	if got := serverAddrs(s, "private"); fmt.Sprint(got) != "[fixed:"+port.FixedIPs[0].IPAddress+"]" {
		t.Fatalf("server on the port: %v", got)
	}
	s = waitServer(ctx, t, compute, onNet.ID, "ACTIVE")
	addrs := serverAddrs(s, "private")
	if len(addrs) != 1 || !strings.HasPrefix(addrs[0], "fixed:10.0.0.") || addrs[0] == "fixed:"+port.FixedIPs[0].IPAddress {
		t.Fatalf("server on the network: %v", addrs)
	}
	bound, err := ports.Get(ctx, network, port.ID).Extract()
	if err != nil || bound.DeviceID != onPort.ID || !strings.HasPrefix(bound.DeviceOwner, "compute:") || bound.Status != "ACTIVE" {
		t.Fatalf("bound port %+v %v", bound, err)
	}

	// A floating IP of public, NATed to the server on the network.
	listed, err := ports.List(network, ports.ListOpts{DeviceID: onNet.ID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nics, _ := ports.ExtractPorts(listed)
	if len(nics) != 1 {
		t.Fatalf("server's ports %+v", nics)
	}
	fip, err := floatingips.Create(ctx, network, floatingips.CreateOpts{FloatingNetworkID: public, PortID: nics[0].ID}).Extract()
	if err != nil {
		t.Fatalf("floating ip create: %v", err)
	}
	if !strings.HasPrefix(fip.FloatingIP, "172.24.4.") || fip.RouterID == "" || fip.Status != "ACTIVE" {
		t.Fatalf("floating ip %+v", fip)
	}
	s = waitServer(ctx, t, compute, onNet.ID, "ACTIVE")
	if got := serverAddrs(s, "private"); len(got) != 2 || got[1] != "floating:"+fip.FloatingIP {
		t.Fatalf("addresses with the floating ip: %v", got)
	}

	// The shared network's owner (admin) sees demo's port on it.
	_, adminProvider := computeClient(t, ctx, dev.http, "admin")
	adminNet, err := openstack.NewNetworkV2(adminProvider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := ports.Get(ctx, adminNet, port.ID).Extract(); err != nil || p.ID != port.ID {
		t.Fatalf("the network's owner reads the port: %v", err)
	}

	// Deleting the servers deletes the port made for one and unbinds
	// the other's; the floating IP stays, disassociated.
	for _, id := range []string{onNet.ID, onPort.ID} {
		if err := servers.Delete(ctx, compute, id).ExtractErr(); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "servers gone", 60*time.Second, func() error {
		for _, id := range []string{onNet.ID, onPort.ID} {
			if _, err := servers.Get(ctx, compute, id).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
				return errors.New("still there")
			}
		}
		return nil
	})
	if _, err := ports.Get(ctx, network, nics[0].ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("the server's port outlived it: %v", err)
	}
	if p, err := ports.Get(ctx, network, port.ID).Extract(); err != nil || p.DeviceID != "" {
		t.Fatalf("the user's port after its server: %+v %v", p, err)
	}
	if f, err := floatingips.Get(ctx, network, fip.ID).Extract(); err != nil || f.PortID != "" {
		t.Fatalf("floating ip after its port: %+v %v", f, err)
	}
	if err := ports.Delete(ctx, network, port.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if err := floatingips.Delete(ctx, network, fip.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
}
