package server

import (
	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Dev mode's networks, devstack's: a shared tenant network "private"
// (10.0.0.0/24, DHCP on) and the external network "public"
// (172.24.4.0/24, the default for auto-allocated topologies), both the
// admin project's, joined by the router "router1" whose gateway is on
// public, so floating IPs of public reach private's ports.
const (
	devPrivateCIDR    = "10.0.0.0/24"
	devPublicCIDR     = "172.24.4.0/24"
	devPublicPhysnet  = "public"
	devPrivateNetwork = "private"
	devPublicNetwork  = "public"
	devRouter         = "router1"
)

// SeedDevNetworks creates dev mode's networks once the identity is
// seeded (they belong to the admin project). Their ids derive from
// their names and every change is an ensure, so it is idempotent, and
// concurrent seeds agree. A network of the same name already there
// (made by hand) is left alone.
func (s *Server) SeedDevNetworks() error {
	var projects structs.IdentityListResponse
	if err := s.RPC("Identity.List", &structs.IdentityListRequest{Kind: structs.IdentityKindProjects}, &projects); err != nil {
		return err
	}
	admin := ""
	for _, p := range projects.Projects {
		if p.Name == "admin" && p.DomainID == structs.DefaultDomainID {
			admin = p.ID
		}
	}
	if admin == "" {
		return structs.Errorf(structs.KindUnavailable, "the admin project is not seeded yet")
	}
	_, err := s.applyNet(func(state *fsm.StateStore) ([]*structs.NetChange, error) {
		return devNetworkChanges(state, admin)
	})
	return err
}

func devNetworkChanges(state *fsm.StateStore, admin string) ([]*structs.NetChange, error) {
	nets, err := state.Networks(nil)
	if err != nil {
		return nil, err
	}
	byName := map[string]bool{}
	for _, n := range nets {
		byName[n.Name] = true
	}
	id := func(name string) string { return derivedID("dev", name) }
	ensure := func(kind string, c *structs.NetChange) *structs.NetChange {
		c.Op, c.Kind = structs.NetOpEnsure, kind
		return c
	}
	var changes []*structs.NetChange
	if !byName[devPublicNetwork] {
		changes = append(changes,
			ensure(structs.NetKindNetwork, &structs.NetChange{Network: &structs.Network{ID: id("public"), Name: devPublicNetwork,
				ProjectID: admin, AdminStateUp: true, External: true, IsDefault: true, PortSecurityEnabled: true,
				NetworkType: structs.NetTypeFlat, PhysicalNetwork: devPublicPhysnet}}),
			ensure(structs.NetKindSubnet, &structs.NetChange{Subnet: &structs.Subnet{ID: id("public-subnet"), Name: "public-subnet",
				ProjectID: admin, NetworkID: id("public"), IPVersion: 4, CIDR: devPublicCIDR, GatewayIP: "172.24.4.1"}}))
	}
	if !byName[devPrivateNetwork] {
		changes = append(changes,
			ensure(structs.NetKindNetwork, &structs.NetChange{Network: &structs.Network{ID: id("private"), Name: devPrivateNetwork,
				ProjectID: admin, AdminStateUp: true, Shared: true, PortSecurityEnabled: true}}),
			ensure(structs.NetKindSubnet, &structs.NetChange{Subnet: &structs.Subnet{ID: id("private-subnet"), Name: "private-subnet",
				ProjectID: admin, NetworkID: id("private"), IPVersion: 4, CIDR: devPrivateCIDR, GatewayIP: "10.0.0.1",
				EnableDHCP: true, DNSNameservers: []string{}}}))
	}
	if !byName[devPublicNetwork] && !byName[devPrivateNetwork] {
		r := &structs.Router{ID: id("router1"), Name: devRouter, ProjectID: admin, AdminStateUp: true,
			Gateway: &structs.RouterGateway{NetworkID: id("public"), EnableSNAT: true}, GatewayPortID: id("router1-gateway")}
		changes = append(changes,
			ensure(structs.NetKindRouter, &structs.NetChange{Router: r}),
			ensure(structs.NetKindPort, &structs.NetChange{Port: gatewayPort(r, r.Gateway), AutoIPs: true}),
			ensure(structs.NetKindPort, &structs.NetChange{Port: &structs.Port{ID: id("router1-private"), NetworkID: id("private"),
				ProjectID: admin, AdminStateUp: true, MACAddress: newMAC(), DeviceOwner: structs.DeviceOwnerRouterInterface,
				DeviceID: r.ID, FixedIPs: []structs.FixedIP{{SubnetID: id("private-subnet"), IPAddress: "10.0.0.1"}},
				BindingVNICType: structs.VNICTypeNormal}}))
	}
	return changes, nil
}
