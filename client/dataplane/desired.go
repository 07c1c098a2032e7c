package dataplane

import (
	"fmt"
	"net/netip"
	"sort"

	"github.com/stratus-cloud/stratus/structs"
)

// admin is the caller the agent reads state as.
var admin = structs.NetCaller{Admin: true}

// netList lists objects of a kind.
func netList(rpc RPC, req *structs.NetListRequest) (*structs.NetListResponse, error) {
	req.Caller = admin
	var out structs.NetListResponse
	if err := rpc.RPC("Net.List", req, &out); err != nil {
		return nil, fmt.Errorf("list %s objects: %w", req.Kind, err)
	}
	return &out, nil
}

// BuildDesired reads from the servers what a host's dataplane should
// be: the ports bound to it, their networks and subnets (with the
// ports bound to other hosts and those hosts' tunnel endpoints, for
// the overlay), their security
// groups' rules (remote groups resolved to the addresses of the groups'
// ports on those networks), their floating IPs (and the external
// networks these come from) and the SNAT of routers serving their
// subnets.
func BuildDesired(rpc RPC, hostID string) (*Desired, error) {
	bound, err := netList(rpc, &structs.NetListRequest{Kind: structs.NetKindPort, HostID: hostID})
	if err != nil {
		return nil, err
	}
	b := &builder{rpc: rpc, hostID: hostID, d: &Desired{}, nets: map[string]bool{}, bindings: map[string]*structs.PortBinding{}}
	for _, p := range bound.Ports {
		if !b.nets[p.NetworkID] {
			b.nets[p.NetworkID] = true
			b.netIDs = append(b.netIDs, p.NetworkID)
		}
	}
	// Every port of those networks: remote groups, router interfaces.
	for _, id := range b.netIDs {
		out, err := netList(rpc, &structs.NetListRequest{Kind: structs.NetKindPort, NetworkID: id})
		if err != nil {
			return nil, err
		}
		b.netPorts = append(b.netPorts, out.Ports...)
		for id, bd := range out.Bindings {
			b.bindings[id] = bd
		}
	}
	if err := b.floatingIPs(bound.Ports); err != nil {
		return nil, err
	}
	if err := b.routers(); err != nil {
		return nil, err
	}
	if err := b.networks(); err != nil {
		return nil, err
	}
	if err := b.ports(bound.Ports); err != nil {
		return nil, err
	}
	b.remotePorts(hostID)
	return b.d, nil
}

// builder carries BuildDesired's reads.
type builder struct {
	rpc      RPC
	hostID   string
	d        *Desired
	nets     map[string]bool
	netIDs   []string
	netPorts []*structs.Port
	// bindings are netPorts' bindings, by port id.
	bindings map[string]*structs.PortBinding
	// extra are addresses external bridges hold, by network.
	extra map[string][]string
}

func (b *builder) addNet(id string) {
	if !b.nets[id] {
		b.nets[id] = true
		b.netIDs = append(b.netIDs, id)
	}
}

func (b *builder) addAddress(netID, addr string) {
	if b.extra == nil {
		b.extra = map[string][]string{}
	}
	b.extra[netID] = append(b.extra[netID], addr)
}

// floatingIPs adds the floating IPs NATed to the bound ports.
func (b *builder) floatingIPs(bound []*structs.Port) error {
	if len(bound) == 0 {
		return nil
	}
	mine := map[string]bool{}
	for _, p := range bound {
		mine[p.ID] = true
	}
	out, err := netList(b.rpc, &structs.NetListRequest{Kind: structs.NetKindFloatingIP})
	if err != nil {
		return err
	}
	for _, f := range out.FloatingIPs {
		if f.PortID == "" || !mine[f.PortID] || f.FixedIPAddress == "" {
			continue
		}
		b.d.FloatingIPs = append(b.d.FloatingIPs, FloatingIP{Address: f.FloatingIPAddress, FixedIP: f.FixedIPAddress,
			PortID: f.PortID, ExternalNetworkID: f.FloatingNetworkID})
		b.addNet(f.FloatingNetworkID)
		if a, err := netip.ParseAddr(f.FloatingIPAddress); err == nil {
			b.addAddress(f.FloatingNetworkID, netip.PrefixFrom(a, a.BitLen()).String())
		}
	}
	return nil
}

// routers adds the routers with an interface on the host's networks:
// their subnets, gateway and the host elected to hold their SNAT. The
// elected host holds the gateway address and joins every network of
// the router, so the router's other hosts reach it on each.
func (b *builder) routers() error {
	ifaces := map[string][]structs.FixedIP{}
	var ids []string
	for _, p := range b.netPorts {
		if p.DeviceOwner == structs.DeviceOwnerRouterInterface && p.DeviceID != "" {
			if _, ok := ifaces[p.DeviceID]; !ok {
				ids = append(ids, p.DeviceID)
			}
			ifaces[p.DeviceID] = append(ifaces[p.DeviceID], p.FixedIPs...)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	out, err := netList(b.rpc, &structs.NetListRequest{Kind: structs.NetKindRouter, IDs: ids})
	if err != nil {
		return err
	}
	// Gateways first: a network the elected host joins for one router
	// may carry another router's interface too.
	for _, r := range out.Routers {
		if err := b.router(r); err != nil {
			return err
		}
	}
	for i := range b.d.Routers {
		if err := b.interfaces(&b.d.Routers[i], ifaces[b.d.Routers[i].ID]); err != nil {
			return err
		}
	}
	sort.Slice(b.d.Routers, func(i, j int) bool { return b.d.Routers[i].ID < b.d.Routers[j].ID })
	return nil
}

// router adds one router.
func (b *builder) router(r *structs.Router) error {
	dr := Router{ID: r.ID}
	var elected *snatHost
	if r.Gateway != nil && r.Gateway.EnableSNAT && r.GatewayPortID != "" {
		h, err := b.snatHost(r.ID)
		if err != nil {
			return err
		}
		elected = h
		dr.SNAT, dr.ExternalNetworkID, dr.SNATHostID, dr.SNATTunnelIP = true, r.Gateway.NetworkID, h.id, h.tunnelIP
	}
	if elected != nil && elected.id == b.hostID {
		if err := b.holdGateway(r, &dr, elected); err != nil {
			return err
		}
	}
	b.d.Routers = append(b.d.Routers, dr)
	return nil
}

// interfaces adds a router's IPv4 subnets on the host's networks.
func (b *builder) interfaces(dr *Router, ifaces []structs.FixedIP) error {
	subs, err := netList(b.rpc, &structs.NetListRequest{Kind: structs.NetKindSubnet, IDs: subnetIDs(ifaces)})
	if err != nil {
		return err
	}
	for _, s := range subs.Subnets {
		if s.IPVersion == 4 && b.nets[s.NetworkID] {
			dr.Interfaces = append(dr.Interfaces, RouterInterface{NetworkID: s.NetworkID, CIDR: s.CIDR})
		}
	}
	return nil
}

// holdGateway gives the elected host the router's gateway address on
// the external network and the router's networks it has no port on.
func (b *builder) holdGateway(r *structs.Router, dr *Router, h *snatHost) error {
	gw, err := netList(b.rpc, &structs.NetListRequest{Kind: structs.NetKindPort, IDs: []string{r.GatewayPortID}})
	if err != nil {
		return err
	}
	if len(gw.Ports) == 0 || len(gw.Ports[0].FixedIPs) == 0 {
		return nil
	}
	gwIP := gw.Ports[0].FixedIPs[0]
	dr.GatewayIP = gwIP.IPAddress
	b.addNet(r.Gateway.NetworkID)
	if ext, err := netList(b.rpc, &structs.NetListRequest{Kind: structs.NetKindSubnet, IDs: []string{gwIP.SubnetID}}); err == nil && len(ext.Subnets) == 1 {
		if pfx, err := netip.ParsePrefix(ext.Subnets[0].CIDR); err == nil {
			b.addAddress(r.Gateway.NetworkID, fmt.Sprintf("%s/%d", gwIP.IPAddress, pfx.Bits()))
		}
	}
	for netID, ports := range h.otherNets {
		if b.nets[netID] {
			continue
		}
		b.addNet(netID)
		b.netPorts = append(b.netPorts, ports.Ports...)
		for id, bd := range ports.Bindings {
			b.bindings[id] = bd
		}
	}
	return nil
}

func subnetIDs(ips []structs.FixedIP) []string {
	var out []string
	for _, ip := range ips {
		out = append(out, ip.SubnetID)
	}
	return sortedUnique(out)
}

// networks adds the networks with their subnets. An external network's
// subnets give no gateway address to the bridge (the upstream router
// holds it) and no DHCP.
func (b *builder) networks() error {
	if len(b.netIDs) == 0 {
		return nil
	}
	nets, err := netList(b.rpc, &structs.NetListRequest{Kind: structs.NetKindNetwork, IDs: b.netIDs})
	if err != nil {
		return err
	}
	for _, n := range nets.Networks {
		dn := Network{ID: n.ID, MTU: n.MTU, External: n.External, Addresses: sortedUnique(b.extra[n.ID]),
			Type: n.NetworkType, SegmentationID: n.SegmentationID, PhysicalNetwork: n.PhysicalNetwork}
		subs, err := netList(b.rpc, &structs.NetListRequest{Kind: structs.NetKindSubnet, NetworkID: n.ID})
		if err != nil {
			return err
		}
		for _, s := range subs.Subnets {
			ds := Subnet{ID: s.ID, IPVersion: s.IPVersion, CIDR: s.CIDR, GatewayIP: s.GatewayIP, DHCP: s.EnableDHCP,
				DNS: s.DNSNameservers, Routes: s.HostRoutes, IPv6AddressMode: s.IPv6AddressMode}
			if n.External {
				// The upstream router holds the gateway: the bridge
				// gets no address from it, only the routers' tables
				// a default route to it (routing_plan.go).
				ds.DHCP = false
			}
			dn.Subnets = append(dn.Subnets, ds)
		}
		if n.External {
			dn.OnLink = onLink(dn.Subnets, dn.Addresses)
		}
		b.d.Networks = append(b.d.Networks, dn)
	}
	sort.Slice(b.d.Networks, func(i, j int) bool { return b.d.Networks[i].ID < b.d.Networks[j].ID })
	return nil
}

// ports adds the bound ports with their rules.
func (b *builder) ports(bound []*structs.Port) error {
	var sgIDs []string
	for _, p := range bound {
		sgIDs = append(sgIDs, p.SecurityGroups...)
	}
	rules := map[string][]*structs.SecurityGroupRule{}
	if sgIDs = sortedUnique(sgIDs); len(sgIDs) > 0 {
		out, err := netList(b.rpc, &structs.NetListRequest{Kind: structs.NetKindSecurityGroup, IDs: sgIDs})
		if err != nil {
			return err
		}
		for _, r := range out.SecurityGroupRules {
			rules[r.SecurityGroupID] = append(rules[r.SecurityGroupID], r)
		}
	}
	members := map[string][]string{}
	for _, p := range b.netPorts {
		for _, g := range p.SecurityGroups {
			for _, ip := range p.FixedIPs {
				members[g] = append(members[g], ip.IPAddress)
			}
		}
	}
	for _, p := range bound {
		dp := Port{ID: p.ID, NetworkID: p.NetworkID, MAC: p.MACAddress, PortSecurity: p.PortSecurityEnabled,
			AllowedPairs: p.AllowedAddressPairs}
		for _, ip := range p.FixedIPs {
			dp.IPs = append(dp.IPs, ip.IPAddress)
		}
		for _, g := range p.SecurityGroups {
			for _, r := range rules[g] {
				dp.Rules = append(dp.Rules, resolveRule(r, members))
			}
		}
		b.d.Ports = append(b.d.Ports, dp)
	}
	return nil
}

// resolveRule turns a rule's remote into addresses.
func resolveRule(r *structs.SecurityGroupRule, members map[string][]string) Rule {
	out := Rule{Direction: r.Direction, EtherType: r.EtherType, Protocol: r.Protocol,
		PortMin: r.PortRangeMin, PortMax: r.PortRangeMax}
	switch {
	case r.RemoteIPPrefix != "":
		out.Remotes = []string{r.RemoteIPPrefix}
	case r.RemoteGroupID != "":
		out.Remotes = sortedUnique(members[r.RemoteGroupID])
	default:
		out.AnyRemote = true
	}
	return out
}
