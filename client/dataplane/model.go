package dataplane

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// BridgeName is the Linux bridge of a network: brq + the network id's
// first 11 characters, as Neutron's linuxbridge agent names it.
func BridgeName(networkID string) string { return devName("brq", networkID) }

// TapName is the tap device of a port: tap + the port id's first 11
// characters.
func TapName(portID string) string { return devName("tap", portID) }

// devName is prefix+id cut to the 14 characters Neutron uses (the
// kernel allows 15).
func devName(prefix, id string) string {
	n := prefix + id
	if len(n) > 14 {
		n = n[:14]
	}
	return n
}

// Desired is what a host's dataplane should be: the networks its ports
// are on (and the external networks their floating IPs come from), the
// ports with their resolved security rules, floating IPs and the
// routers serving their subnets.
type Desired struct {
	Networks    []Network
	Ports       []Port
	FloatingIPs []FloatingIP
	Routers     []Router
	// Remote are the ports of the host's networks bound to other hosts,
	// with those hosts' tunnel endpoints: what the overlay's forwarding
	// and neighbour entries are programmed from (overlay.go).
	Remote []RemotePort
}

// Network is one network on the host.
type Network struct {
	ID       string
	MTU      int
	External bool
	Subnets  []Subnet
	// Addresses are extra addresses of the bridge ("172.24.4.2/24",
	// "172.24.4.10/32"): routers' gateways and floating IPs on an
	// external network.
	Addresses []string
	// OnLink are prefixes routed out of the bridge without an address
	// in them: an external subnet on a host that holds only floating
	// IPs (/32) of it, not the router's gateway.
	OnLink []string
	// Type is the segment's type (structs.NetType*: vxlan, flat, vlan,
	// local), SegmentationID its VNI or VLAN id and PhysicalNetwork the
	// physical network a flat or VLAN network is on.
	Type            string
	SegmentationID  int
	PhysicalNetwork string
}

// Subnet is a subnet of a network.
type Subnet struct {
	ID        string
	IPVersion int
	CIDR      string
	GatewayIP string
	DHCP      bool
	DNS       []string
	Routes    []structs.HostRoute
	// IPv6AddressMode is "", slaac, dhcpv6-stateful or dhcpv6-stateless.
	IPv6AddressMode string
}

// Port is one port bound to the host.
type Port struct {
	ID        string
	NetworkID string
	MAC       string
	IPs       []string
	// Hostname is what DHCP tells the guest (host-10-0-0-5 when empty).
	Hostname string
	// PortSecurity turns the security rules and anti-spoofing on.
	PortSecurity bool
	// AllowedPairs are allowed address pairs (addresses or prefixes and
	// MACs the port may also send from).
	AllowedPairs []structs.AddressPair
	// Rules are the port's security groups' rules, remote groups
	// resolved to addresses.
	Rules []Rule
}

// Rule is a security group rule with its remote resolved.
type Rule struct {
	Direction string // ingress or egress
	EtherType string // IPv4 or IPv6
	Protocol  string // "", tcp, udp, icmp, icmpv6, a number, …
	PortMin   *int
	PortMax   *int
	// Remotes are the prefixes or addresses it matches; nil with
	// AnyRemote false means nothing (an empty remote group).
	Remotes   []string
	AnyRemote bool
}

// FloatingIP is a floating address NATed to a fixed one.
type FloatingIP struct {
	Address           string
	FixedIP           string
	PortID            string
	ExternalNetworkID string
}

// Router is a router with an interface on one of the host's networks,
// as this host routes it (routing.go): its subnets, its gateway, and
// the host elected to hold its gateway address and source NAT.
type Router struct {
	ID string
	// Interfaces are its IPv4 subnets on the host's networks.
	Interfaces []RouterInterface
	// ExternalNetworkID is its gateway's network ("" for none; the
	// network is listed when this host holds the gateway or floating
	// IPs of it) and GatewayIP its address there.
	ExternalNetworkID string
	GatewayIP         string
	// SNAT is the gateway's source NAT (enable_snat).
	SNAT bool
	// SNATHostID is the host elected to hold the gateway address and
	// the source NAT (desired_snat.go); SNATTunnelIP its tunnel
	// endpoint ("" when it has none).
	SNATHostID   string
	SNATTunnelIP string
}

// RouterInterface is a router's IPv4 subnet on a network.
type RouterInterface struct {
	NetworkID string
	CIDR      string
}

// network returns the desired network of an id, or nil.
func (d *Desired) network(id string) *Network {
	for i := range d.Networks {
		if d.Networks[i].ID == id {
			return &d.Networks[i]
		}
	}
	return nil
}

// Validate checks what the commands would choke on, with clear errors.
func (d *Desired) Validate() error {
	ids := map[string]bool{}
	for _, n := range d.Networks {
		if n.ID == "" {
			return fmt.Errorf("network without an id")
		}
		if ids[n.ID] {
			return fmt.Errorf("network %s listed twice", n.ID)
		}
		ids[n.ID] = true
		for _, s := range n.Subnets {
			if _, err := netip.ParsePrefix(s.CIDR); err != nil {
				return fmt.Errorf("subnet %s: bad CIDR %q", s.ID, s.CIDR)
			}
		}
		for _, a := range n.Addresses {
			if _, err := netip.ParsePrefix(a); err != nil {
				return fmt.Errorf("network %s: bad address %q", n.ID, a)
			}
		}
	}
	for _, p := range d.Ports {
		if !ids[p.NetworkID] {
			return fmt.Errorf("port %s on network %s, which is not listed", p.ID, p.NetworkID)
		}
		if !validMAC(p.MAC) {
			return fmt.Errorf("port %s: bad MAC %q", p.ID, p.MAC)
		}
		for _, ip := range p.IPs {
			if _, err := netip.ParseAddr(ip); err != nil {
				return fmt.Errorf("port %s: bad address %q", p.ID, ip)
			}
		}
	}
	if err := d.validateRemote(ids); err != nil {
		return err
	}
	if err := d.validateRouters(); err != nil {
		return err
	}
	for _, f := range d.FloatingIPs {
		if _, err := netip.ParseAddr(f.Address); err != nil {
			return fmt.Errorf("floating IP %q is not an address", f.Address)
		}
		if _, err := netip.ParseAddr(f.FixedIP); err != nil {
			return fmt.Errorf("floating IP %s: bad fixed address %q", f.Address, f.FixedIP)
		}
		if !ids[f.ExternalNetworkID] {
			return fmt.Errorf("floating IP %s on network %s, which is not listed", f.Address, f.ExternalNetworkID)
		}
	}
	return nil
}

// validMAC reports whether s is a colon-separated 48-bit MAC.
func validMAC(s string) bool {
	parts := strings.Split(s, ":")
	if len(parts) != 6 {
		return false
	}
	for _, p := range parts {
		if len(p) != 2 || strings.Trim(strings.ToLower(p), "0123456789abcdef") != "" {
			return false
		}
	}
	return true
}

// hostname is the DHCP hostname of a port's address.
func (p *Port) hostname(ip string) string {
	if p.Hostname != "" {
		return p.Hostname
	}
	return "host-" + strings.NewReplacer(".", "-", ":", "-").Replace(ip)
}

// sortedUnique sorts and deduplicates.
func sortedUnique(in []string) []string {
	out := append([]string(nil), in...)
	sort.Strings(out)
	j := 0
	for i, s := range out {
		if i == 0 || s != out[j-1] {
			out[j] = s
			j++
		}
	}
	return out[:j]
}
