package structs

import "strings"

// Networking: Neutron's resources as Stratus replicates them. Networks,
// subnets, ports, security groups and their rules, floating IPs and
// routers live in the servers' Raft state like instances do; every
// change is one NetApplyEntry whose changes are checked and applied in
// one transaction, IP addresses included (see fsm/ports.go).

// Network resource kinds, as NetChange and the Net RPCs name them.
const (
	NetKindNetwork           = "network"
	NetKindSubnet            = "subnet"
	NetKindPort              = "port"
	NetKindSecurityGroup     = "security_group"
	NetKindSecurityGroupRule = "security_group_rule"
	NetKindFloatingIP        = "floatingip"
	NetKindRouter            = "router"
)

// NetKinds lists every kind.
var NetKinds = []string{NetKindNetwork, NetKindSubnet, NetKindPort, NetKindSecurityGroup,
	NetKindSecurityGroupRule, NetKindFloatingIP, NetKindRouter}

// Port device owners with a meaning (Neutron's constants). An
// instance's ports are owned by "compute:<zone>".
const (
	DeviceOwnerRouterInterface = "network:router_interface"
	DeviceOwnerRouterGateway   = "network:router_gateway"
	DeviceOwnerFloatingIP      = "network:floatingip"
	DeviceOwnerDHCP            = "network:dhcp"
	DeviceOwnerComputePrefix   = "compute:"
)

// Statuses of networks, ports, routers and floating IPs.
const (
	NetStatusActive = "ACTIVE"
	NetStatusDown   = "DOWN"
	NetStatusBuild  = "BUILD"
)

// Network types (provider:network_type). Tenant networks are VXLAN
// segments whose VNI the FSM allocates; flat and vlan networks sit on a
// named physical network.
const (
	NetTypeVXLAN = "vxlan"
	NetTypeFlat  = "flat"
	NetTypeVLAN  = "vlan"
	NetTypeLocal = "local"
)

// NetworkTypes lists the network types Stratus accepts.
var NetworkTypes = []string{NetTypeVXLAN, NetTypeFlat, NetTypeVLAN, NetTypeLocal}

// MTUs: the physical networks' (Neutron's global_physnet_mtu), and a
// VXLAN segment's, 50 bytes less for its encapsulation.
const (
	PhysnetMTU = 1500
	VXLANMTU   = PhysnetMTU - VXLANOverhead
	// VXLANOverhead is what VXLAN's encapsulation (outer IPv4, UDP,
	// VXLAN and inner Ethernet headers) takes from the physical MTU.
	VXLANOverhead = 50
	// MaxVNI is the largest VXLAN network identifier.
	MaxVNI = 1<<24 - 1
	// MaxVLAN is the largest VLAN id.
	MaxVLAN = 4094
)

// Port binding values shown for every port: Stratus's future dataplane
// wires ports into Linux bridges.
const (
	VNICTypeNormal = "normal"
	VIFTypeBridge  = "bridge"
	VIFTypeUnbound = "unbound"
)

// Security group rule directions and ether types.
const (
	DirectionIngress = "ingress"
	DirectionEgress  = "egress"
	EtherTypeIPv4    = "IPv4"
	EtherTypeIPv6    = "IPv6"
)

// DefaultSecurityGroupName is the group every project has, created on
// its first use.
const DefaultSecurityGroupName = "default"

// Network quota resources, Neutron's names, and their defaults.
const (
	QuotaNetwork           = "network"
	QuotaSubnet            = "subnet"
	QuotaPort              = "port"
	QuotaRouter            = "router"
	QuotaFloatingIP        = "floatingip"
	QuotaSecurityGroup     = "security_group"
	QuotaSecurityGroupRule = "security_group_rule"
)

// NetworkDefaultQuotas are Neutron's default quotas. They live beside
// Nova's in the quota table (a project's or the default class's limits)
// but are not part of the Compute API's quota sets.
var NetworkDefaultQuotas = map[string]int64{
	QuotaNetwork:           100,
	QuotaSubnet:            100,
	QuotaPort:              500,
	QuotaRouter:            10,
	QuotaFloatingIP:        50,
	QuotaSecurityGroup:     10,
	QuotaSecurityGroupRule: 100,
}

// Network is a Neutron network: an isolated layer-2 segment.
type Network struct {
	ID          string
	Name        string
	Description string
	ProjectID   string

	AdminStateUp bool
	// Shared networks may be used by every project.
	Shared bool
	// External networks (router:external) carry routers' gateways and
	// floating IPs; every project may see them.
	External bool
	// IsDefault marks the external network that auto-allocated
	// topologies (Nova's networks "auto") connect to.
	IsDefault bool
	MTU       int

	PortSecurityEnabled bool

	// The segment (provider:*): type, physical network and id (the VNI
	// of a VXLAN network, chosen by the FSM when 0).
	NetworkType     string
	PhysicalNetwork string
	SegmentationID  int

	// AutoAllocated marks a project's get-me-a-network network.
	AutoAllocated bool

	CreatedAt int64
	UpdatedAt int64
	// Revision counts the network's changes (revision_number).
	Revision    uint64
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a copy.
func (n *Network) Copy() *Network {
	if n == nil {
		return nil
	}
	c := *n
	return &c
}

// IPRange is an allocation pool: first and last address, inclusive.
type IPRange struct {
	Start string
	End   string
}

// HostRoute is a static route (host_routes, router routes).
type HostRoute struct {
	Destination string
	NextHop     string
}

// Subnet is an IP range on a network, with its gateway and the pools
// ports' addresses are allocated from.
type Subnet struct {
	ID          string
	Name        string
	Description string
	ProjectID   string
	NetworkID   string

	IPVersion int
	// CIDR is canonical ("10.0.0.0/24").
	CIDR string
	// GatewayIP is "" for a subnet without a gateway.
	GatewayIP       string
	AllocationPools []IPRange
	DNSNameservers  []string
	HostRoutes      []HostRoute
	EnableDHCP      bool
	// IPv6AddressMode and IPv6RAMode: "", "slaac", "dhcpv6-stateful"
	// or "dhcpv6-stateless". A SLAAC (or stateless) subnet's addresses
	// derive from the port's MAC.
	IPv6AddressMode string
	IPv6RAMode      string

	CreatedAt   int64
	UpdatedAt   int64
	Revision    uint64
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (s *Subnet) Copy() *Subnet {
	if s == nil {
		return nil
	}
	c := *s
	c.AllocationPools = append([]IPRange(nil), s.AllocationPools...)
	c.DNSNameservers = append([]string(nil), s.DNSNameservers...)
	c.HostRoutes = append([]HostRoute(nil), s.HostRoutes...)
	return &c
}

// SLAAC reports whether addresses on the subnet derive from MACs
// instead of being allocated from its pools.
func (s *Subnet) SLAAC() bool {
	return s.IPVersion == 6 && (s.IPv6AddressMode == "slaac" || s.IPv6AddressMode == "dhcpv6-stateless")
}

// FixedIP is one of a port's addresses. In a change, an empty IPAddress
// asks the FSM to allocate one from SubnetID (lowest free address of
// its pools), and an empty SubnetID with an address names the subnet
// that contains it.
type FixedIP struct {
	SubnetID  string
	IPAddress string
}

// AddressPair is an allowed address pair: traffic a port may send from
// another address (and MAC) than its own.
type AddressPair struct {
	IPAddress  string
	MACAddress string
}

// Port is a Neutron port: a virtual NIC's place on a network, with its
// MAC and addresses.
//
// Binding: an instance's port (device owner compute:*, device id the
// instance) is bound to the host its instance is placed on. The binding
// follows the instance, so it is not stored: readers resolve
// binding:host_id from the instance, and a move rebinds every port in
// the same entry that moves the instance. BindingHostID holds an
// administrator's binding of any other port.
type Port struct {
	ID          string
	Name        string
	Description string
	ProjectID   string
	NetworkID   string

	AdminStateUp bool
	// MACAddress is chosen before proposal (fa:16:3e:xx:xx:xx); the FSM
	// checks it is unique on the network.
	MACAddress string
	FixedIPs   []FixedIP

	DeviceID    string
	DeviceOwner string

	SecurityGroups      []string
	AllowedAddressPairs []AddressPair
	PortSecurityEnabled bool

	BindingHostID   string
	BindingVNICType string
	BindingProfile  map[string]any

	// Tag is the device tag Nova was given for the interface (2.32).
	Tag string
	// PreserveOnDelete marks a port the user created and handed to an
	// instance: deleting the instance unbinds it instead of deleting
	// it, as Nova does.
	PreserveOnDelete bool
	// DeviceSeq orders an instance's ports (its NICs, eth0 first).
	DeviceSeq uint64

	CreatedAt   int64
	UpdatedAt   int64
	Revision    uint64
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (p *Port) Copy() *Port {
	if p == nil {
		return nil
	}
	c := *p
	c.FixedIPs = append([]FixedIP(nil), p.FixedIPs...)
	c.SecurityGroups = append([]string(nil), p.SecurityGroups...)
	c.AllowedAddressPairs = append([]AddressPair(nil), p.AllowedAddressPairs...)
	if p.BindingProfile != nil {
		c.BindingProfile = make(map[string]any, len(p.BindingProfile))
		for k, v := range p.BindingProfile {
			c.BindingProfile[k] = v
		}
	}
	return &c
}

// IsCompute reports whether the port belongs to an instance.
func (p *Port) IsCompute() bool {
	return strings.HasPrefix(p.DeviceOwner, DeviceOwnerComputePrefix)
}

// IsRouterPort reports whether the port is a router's interface or
// gateway.
func (p *Port) IsRouterPort() bool {
	return p.DeviceOwner == DeviceOwnerRouterInterface || p.DeviceOwner == DeviceOwnerRouterGateway
}

// HasIP reports whether addr is one of the port's fixed IPs.
func (p *Port) HasIP(addr string) bool {
	for _, ip := range p.FixedIPs {
		if ip.IPAddress == addr {
			return true
		}
	}
	return false
}

// SecurityGroup is a named set of firewall rules ports refer to.
type SecurityGroup struct {
	ID          string
	Name        string
	Description string
	ProjectID   string
	Stateful    bool

	CreatedAt   int64
	UpdatedAt   int64
	Revision    uint64
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a copy.
func (g *SecurityGroup) Copy() *SecurityGroup {
	if g == nil {
		return nil
	}
	c := *g
	return &c
}

// SecurityGroupRule is one rule of a group. Nil port bounds and an
// empty protocol mean any.
type SecurityGroupRule struct {
	ID              string
	SecurityGroupID string
	ProjectID       string
	Description     string
	Direction       string
	EtherType       string
	Protocol        string
	PortRangeMin    *int
	PortRangeMax    *int
	RemoteIPPrefix  string
	RemoteGroupID   string

	CreatedAt   int64
	UpdatedAt   int64
	Revision    uint64
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (r *SecurityGroupRule) Copy() *SecurityGroupRule {
	if r == nil {
		return nil
	}
	c := *r
	if r.PortRangeMin != nil {
		v := *r.PortRangeMin
		c.PortRangeMin = &v
	}
	if r.PortRangeMax != nil {
		v := *r.PortRangeMax
		c.PortRangeMax = &v
	}
	return &c
}

// SameRule reports whether two rules of one group match the same
// traffic (Neutron refuses a duplicate).
func (r *SecurityGroupRule) SameRule(o *SecurityGroupRule) bool {
	eqInt := func(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return r.SecurityGroupID == o.SecurityGroupID && r.Direction == o.Direction && r.EtherType == o.EtherType &&
		r.Protocol == o.Protocol && eqInt(r.PortRangeMin, o.PortRangeMin) && eqInt(r.PortRangeMax, o.PortRangeMax) &&
		r.RemoteIPPrefix == o.RemoteIPPrefix && r.RemoteGroupID == o.RemoteGroupID
}

// FloatingIP is an address of an external network, optionally
// associated with a port's fixed IP (one-to-one NAT through the router
// that connects the port's subnet to that network).
type FloatingIP struct {
	ID                string
	ProjectID         string
	Description       string
	FloatingNetworkID string
	// FloatingIPAddress is the address, allocated by the FSM on
	// FloatingPortID, the external network's port that holds it.
	FloatingIPAddress string
	FloatingPortID    string

	// PortID, FixedIPAddress and RouterID describe the association; the
	// FSM finds the router.
	PortID         string
	FixedIPAddress string
	RouterID       string

	CreatedAt   int64
	UpdatedAt   int64
	Revision    uint64
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a copy.
func (f *FloatingIP) Copy() *FloatingIP {
	if f == nil {
		return nil
	}
	c := *f
	return &c
}

// Status is Neutron's floating IP status: ACTIVE when associated.
func (f *FloatingIP) Status() string {
	if f.PortID != "" {
		return NetStatusActive
	}
	return NetStatusDown
}

// RouterGateway is a router's external gateway (external_gateway_info).
type RouterGateway struct {
	NetworkID  string
	EnableSNAT bool
	// ExternalFixedIPs are the gateway port's addresses; in a change,
	// the addresses asked for (an empty list: one from any subnet).
	ExternalFixedIPs []FixedIP
}

// Router connects subnets (its interfaces are ports it owns) and, with
// a gateway, an external network.
type Router struct {
	ID           string
	Name         string
	Description  string
	ProjectID    string
	AdminStateUp bool
	Gateway      *RouterGateway
	// GatewayPortID is the port on the external network the gateway
	// uses, created and deleted by the FSM with the gateway.
	GatewayPortID string
	Routes        []HostRoute
	Distributed   bool
	HA            bool

	CreatedAt   int64
	UpdatedAt   int64
	Revision    uint64
	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (r *Router) Copy() *Router {
	if r == nil {
		return nil
	}
	c := *r
	if r.Gateway != nil {
		g := *r.Gateway
		g.ExternalFixedIPs = append([]FixedIP(nil), r.Gateway.ExternalFixedIPs...)
		c.Gateway = &g
	}
	c.Routes = append([]HostRoute(nil), r.Routes...)
	return &c
}

// NetChange operations.
const (
	// NetOpCreate creates an object that must not exist.
	NetOpCreate = "create"
	// NetOpEnsure creates an object unless one with its id exists (a
	// project's default security group, an auto-allocated topology:
	// their ids derive from the project, so concurrent first uses
	// agree).
	NetOpEnsure = "ensure"
	// NetOpUpdate replaces an object with the full new one.
	NetOpUpdate = "update"
	// NetOpDelete deletes the object ID of Kind.
	NetOpDelete = "delete"
)

// NetChange is one change of a NetApplyEntry. Exactly one object field
// is set for create, ensure and update.
type NetChange struct {
	Op   string
	Kind string
	// ID names the object to delete.
	ID string
	// Expect, for an update, is the ModifyIndex the object must still
	// have (0: any): the proposer's read-modify-write fails rather than
	// lose a concurrent change.
	Expect uint64
	// AutoIPs asks, for a port create, for Neutron's default addresses:
	// one from the first IPv4 subnet with a free address, one from the
	// first stateful IPv6 subnet, and one from every SLAAC subnet.
	AutoIPs bool
	// Claim, for a port update that sets a device, refuses a port
	// already bound to another device (PortInUse).
	Claim bool
	// Segments, for a network create, is the proposing server's
	// segmentation config (nil: DefaultNetSegments).
	Segments *NetSegments `json:",omitempty"`

	Network       *Network           `json:",omitempty"`
	Subnet        *Subnet            `json:",omitempty"`
	Port          *Port              `json:",omitempty"`
	SecurityGroup *SecurityGroup     `json:",omitempty"`
	Rule          *SecurityGroupRule `json:",omitempty"`
	FloatingIP    *FloatingIP        `json:",omitempty"`
	Router        *Router            `json:",omitempty"`
}

// ObjectID is the id of the change's object.
func (c *NetChange) ObjectID() string {
	switch {
	case c.Network != nil:
		return c.Network.ID
	case c.Subnet != nil:
		return c.Subnet.ID
	case c.Port != nil:
		return c.Port.ID
	case c.SecurityGroup != nil:
		return c.SecurityGroup.ID
	case c.Rule != nil:
		return c.Rule.ID
	case c.FloatingIP != nil:
		return c.FloatingIP.ID
	case c.Router != nil:
		return c.Router.ID
	}
	return c.ID
}

// NetApplyEntry is the Raft entry of every networking change: its
// changes apply in order, in one transaction, or not at all. Apply
// allocates addresses and VNIs from the state, checks references,
// uniqueness (addresses, MACs) and the projects' quotas, and cascades
// what Neutron cascades (a network's subnets, a group's rules, a
// router's gateway port, a floating IP's port, a deleted port's
// floating IP associations).
type NetApplyEntry struct {
	Changes []*NetChange
	// At stamps created and updated objects (unix nanoseconds).
	At int64
}
