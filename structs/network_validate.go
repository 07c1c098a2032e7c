package structs

import (
	"net/netip"
	"strconv"
	"strings"
)

// Checks of networking objects that need nothing but the object. The
// servers run them before proposing, and the FSM again when applying.

func invalidInput(format string, args ...any) error {
	return NetErrorf(KindInvalid, ErrInvalidInput, "Invalid input for operation: "+format, args...)
}

// Validate checks a network's own attributes.
func (n *Network) Validate() error {
	if len(n.Name) > 255 {
		return invalidInput("'%s' exceeds maximum length of 255 for name.", n.Name)
	}
	if len(n.Description) > 255 {
		return invalidInput("description exceeds maximum length of 255.")
	}
	known := n.NetworkType == ""
	for _, t := range NetworkTypes {
		known = known || t == n.NetworkType
	}
	if !known {
		return invalidInput("network_type value '%s' not supported.", n.NetworkType)
	}
	if (n.NetworkType == NetTypeFlat || n.NetworkType == NetTypeVLAN) && n.PhysicalNetwork == "" {
		return invalidInput("%s network requires a physical_network.", n.NetworkType)
	}
	if n.NetworkType == NetTypeVLAN && (n.SegmentationID < 1 || n.SegmentationID > 4094) {
		return invalidInput("provider:segmentation_id out of range (1 through 4094).")
	}
	if n.NetworkType == NetTypeVXLAN && (n.SegmentationID < 0 || n.SegmentationID > MaxVNI) {
		return invalidInput("provider:segmentation_id out of range (1 through %d).", MaxVNI)
	}
	if n.MTU != 0 && (n.MTU < 68 || n.MTU > 9216) {
		return invalidInput("Requested MTU %d is out of range.", n.MTU)
	}
	return nil
}

// Normalize checks a subnet's own attributes and puts them in canonical
// form: the CIDR and addresses as netip prints them, default gateway
// already decided by the caller, default allocation pools (the usable
// range without the gateway) when none are given.
func (s *Subnet) Normalize() error {
	if s.IPVersion != 4 && s.IPVersion != 6 {
		return invalidInput("Invalid input for ip_version. Reason: '%d' is not in [4, 6].", s.IPVersion)
	}
	if len(s.Name) > 255 {
		return invalidInput("'%s' exceeds maximum length of 255 for name.", s.Name)
	}
	p, err := ParseSubnetCIDR(s.CIDR, s.IPVersion)
	if err != nil {
		return err
	}
	s.CIDR = p.String()
	if s.GatewayIP != "" {
		g, err := ParseIP(s.GatewayIP)
		if err != nil || IPVersion(g) != s.IPVersion {
			return invalidInput("'%s' is not a valid IP address.", s.GatewayIP)
		}
		first, last := UsableRange(p)
		if !p.Contains(g) || g.Less(first) || last.Less(g) {
			return invalidInput("Gateway is not valid on subnet.")
		}
		s.GatewayIP = g.String()
	}
	if len(s.AllocationPools) == 0 {
		gw, _ := ParseIP(s.GatewayIP)
		s.AllocationPools = DefaultPools(p, gw)
	} else if s.AllocationPools, err = ValidatePools(p, s.AllocationPools, s.GatewayIP); err != nil {
		return err
	}
	for _, m := range []string{s.IPv6AddressMode, s.IPv6RAMode} {
		switch m {
		case "", "slaac", "dhcpv6-stateful", "dhcpv6-stateless":
		default:
			return invalidInput("'%s' is not in ['dhcpv6-stateful', 'dhcpv6-stateless', 'slaac', None].", m)
		}
		if m != "" && s.IPVersion == 4 {
			return invalidInput("ipv6_ra_mode or ipv6_address_mode cannot be set when ip_version is 4.")
		}
	}
	if s.IPv6AddressMode != "" && s.IPv6RAMode != "" && s.IPv6AddressMode != s.IPv6RAMode {
		return invalidInput("ipv6_ra_mode set to '%s' with ipv6_address_mode set to '%s' is not valid. If both attributes are set, they must be the same value.",
			s.IPv6RAMode, s.IPv6AddressMode)
	}
	if s.SLAAC() && p.Bits() != 64 {
		return invalidInput("Invalid CIDR %s for IPv6 address mode. OpenStack uses the EUI-64 address format, which requires the prefix to be /64.", s.CIDR)
	}
	seen := map[string]bool{}
	for i, ns := range s.DNSNameservers {
		a, err := ParseIP(ns)
		if err != nil {
			return invalidInput("'%s' is not a valid nameserver. '%s' is not a valid IP address.", ns, ns)
		}
		if seen[a.String()] {
			return invalidInput("Duplicate nameserver '%s'.", ns)
		}
		seen[a.String()] = true
		s.DNSNameservers[i] = a.String()
	}
	for i, r := range s.HostRoutes {
		d, err := netip.ParsePrefix(r.Destination)
		if err != nil {
			return invalidInput("Invalid data format for hostroute: '%s' is not a valid IP subnet.", r.Destination)
		}
		n, err := ParseIP(r.NextHop)
		if err != nil {
			return invalidInput("Invalid data format for hostroute: '%s' is not a valid IP address.", r.NextHop)
		}
		if IPVersion(d.Addr()) != s.IPVersion || IPVersion(n) != s.IPVersion {
			return invalidInput("Host route %s via %s does not match the subnet's IP version.", r.Destination, r.NextHop)
		}
		s.HostRoutes[i] = HostRoute{Destination: d.Masked().String(), NextHop: n.String()}
	}
	return nil
}

// Validate checks a port's own attributes and normalizes its MAC and
// addresses.
func (p *Port) Validate() error {
	if len(p.Name) > 255 {
		return invalidInput("'%s' exceeds maximum length of 255 for name.", p.Name)
	}
	if !ValidMAC(p.MACAddress) {
		return invalidInput("Invalid input for mac_address. Reason: '%s' is not a valid MAC address.", p.MACAddress)
	}
	p.MACAddress = NormalizeMAC(p.MACAddress)
	for i, ip := range p.FixedIPs {
		if ip.IPAddress == "" {
			continue
		}
		a, err := ParseIP(ip.IPAddress)
		if err != nil {
			return invalidInput("Invalid input for fixed_ips. Reason: '%s' is not a valid IP address.", ip.IPAddress)
		}
		p.FixedIPs[i].IPAddress = a.String()
	}
	for i, pair := range p.AllowedAddressPairs {
		addr := pair.IPAddress
		if pr, err := netip.ParsePrefix(addr); err == nil {
			addr = pr.Masked().String()
		} else if a, err := ParseIP(addr); err == nil {
			addr = a.String()
		} else {
			return invalidInput("Invalid input for allowed_address_pairs. Reason: '%s' is not a valid IP address.", pair.IPAddress)
		}
		p.AllowedAddressPairs[i].IPAddress = addr
		if pair.MACAddress != "" {
			if !ValidMAC(pair.MACAddress) {
				return invalidInput("Invalid input for allowed_address_pairs. Reason: '%s' is not a valid MAC address.", pair.MACAddress)
			}
			p.AllowedAddressPairs[i].MACAddress = NormalizeMAC(pair.MACAddress)
		}
	}
	return nil
}

// protocolNumbers are the protocol names Neutron accepts in rules.
var protocolNumbers = map[string]int{
	"ah": 51, "dccp": 33, "egp": 8, "esp": 50, "gre": 47, "hopopt": 0, "icmp": 1, "icmpv6": 58, "igmp": 2,
	"ipip": 4, "ipv6-encap": 41, "ipv6-frag": 44, "ipv6-icmp": 58, "ipv6-nonxt": 59, "ipv6-opts": 60,
	"ipv6-route": 43, "ospf": 89, "pgm": 113, "rsvp": 46, "sctp": 132, "tcp": 6, "udp": 17, "udplite": 136, "vrrp": 112,
}

// portProtocols are the protocols whose rules have port ranges.
var portProtocols = map[string]bool{"tcp": true, "udp": true, "sctp": true, "dccp": true, "udplite": true,
	"6": true, "17": true, "132": true, "33": true, "136": true}

// icmpProtocols carry an ICMP type and code in the port range fields.
var icmpProtocols = map[string]bool{"icmp": true, "icmpv6": true, "ipv6-icmp": true, "1": true, "58": true}

// Normalize checks a security group rule's own attributes, fills the
// defaults (IPv4) and puts the remote prefix in canonical form.
func (r *SecurityGroupRule) Normalize() error {
	if r.Direction != DirectionIngress && r.Direction != DirectionEgress {
		return invalidInput("Invalid input for direction. Reason: '%s' is not in ['ingress', 'egress'].", r.Direction)
	}
	if r.EtherType == "" {
		r.EtherType = EtherTypeIPv4
	}
	if r.EtherType != EtherTypeIPv4 && r.EtherType != EtherTypeIPv6 {
		return invalidInput("Invalid input for ethertype. Reason: '%s' is not in ['IPv4', 'IPv6'].", r.EtherType)
	}
	r.Protocol = strings.ToLower(r.Protocol)
	if r.Protocol == "any" {
		r.Protocol = ""
	}
	if r.Protocol != "" {
		if _, ok := protocolNumbers[r.Protocol]; !ok {
			n, err := strconv.Atoi(r.Protocol)
			if err != nil || n < 0 || n > 255 {
				return NetErrorf(KindInvalid, ErrBadRequest, "Security group rule protocol %s not supported. Only protocol values [None, ah, dccp, egp, esp, gre, icmp, icmpv6, igmp, ipv6-encap, ipv6-frag, ipv6-icmp, ipv6-nonxt, ipv6-opts, ipv6-route, ospf, pgm, rsvp, sctp, tcp, udp, udplite, vrrp] and integer representations [0 to 255] are supported.", r.Protocol)
			}
		}
	}
	switch {
	case (r.PortRangeMin != nil || r.PortRangeMax != nil) && r.Protocol == "":
		return NetErrorf(KindInvalid, ErrBadRequest, "Must also specify protocol if port range is given.")
	case portProtocols[r.Protocol]:
		if r.PortRangeMin != nil && r.PortRangeMax == nil {
			v := *r.PortRangeMin
			r.PortRangeMax = &v
		}
		if r.PortRangeMin != nil && (*r.PortRangeMin < 1 || *r.PortRangeMin > 65535) ||
			r.PortRangeMax != nil && (*r.PortRangeMax < 1 || *r.PortRangeMax > 65535) {
			return invalidInput("Invalid value for port %d.", derefInt(r.PortRangeMin))
		}
		if r.PortRangeMin != nil && r.PortRangeMax != nil && *r.PortRangeMin > *r.PortRangeMax {
			return NetErrorf(KindInvalid, ErrBadRequest, "For TCP/UDP protocols, port_range_min must be <= port_range_max")
		}
	case icmpProtocols[r.Protocol]:
		if r.PortRangeMin != nil && (*r.PortRangeMin < 0 || *r.PortRangeMin > 255) {
			return NetErrorf(KindInvalid, ErrBadRequest, "Invalid value for ICMP field (port_range_min): %d. It must be 0 to 255.", *r.PortRangeMin)
		}
		if r.PortRangeMax != nil && (*r.PortRangeMax < 0 || *r.PortRangeMax > 255) {
			return NetErrorf(KindInvalid, ErrBadRequest, "Invalid value for ICMP field (port_range_max): %d. It must be 0 to 255.", *r.PortRangeMax)
		}
		if r.PortRangeMax != nil && r.PortRangeMin == nil {
			return NetErrorf(KindInvalid, ErrBadRequest, "ICMP code (port-range-max) %d is provided but ICMP type (port-range-min) is missing.", *r.PortRangeMax)
		}
	case r.PortRangeMin != nil || r.PortRangeMax != nil:
		return NetErrorf(KindInvalid, ErrBadRequest, "Ports can only be given for TCP, UDP, SCTP, DCCP, UDP-Lite and ICMP rules.")
	}
	if r.RemoteIPPrefix != "" && r.RemoteGroupID != "" {
		return NetErrorf(KindInvalid, ErrBadRequest, "Only remote_ip_prefix or remote_group_id may be provided.")
	}
	if r.RemoteIPPrefix != "" {
		p, err := netip.ParsePrefix(r.RemoteIPPrefix)
		if err != nil {
			a, aerr := ParseIP(r.RemoteIPPrefix)
			if aerr != nil {
				return invalidInput("Invalid input for remote_ip_prefix. Reason: '%s' is not a valid IP subnet.", r.RemoteIPPrefix)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		want := EtherTypeIPv4
		if p.Addr().Is6() {
			want = EtherTypeIPv6
		}
		if want != r.EtherType {
			return NetErrorf(KindInvalid, ErrBadRequest, "Conflicting value ethertype %s for CIDR %s", r.EtherType, r.RemoteIPPrefix)
		}
		r.RemoteIPPrefix = p.Masked().String()
	}
	return nil
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// ValidateRoutes checks a router's routes.
func ValidateRoutes(routes []HostRoute) ([]HostRoute, error) {
	out := make([]HostRoute, 0, len(routes))
	for _, r := range routes {
		d, err := netip.ParsePrefix(r.Destination)
		if err != nil {
			return nil, invalidInput("Invalid data format for hostroute: '%s' is not a valid IP subnet.", r.Destination)
		}
		n, err := ParseIP(r.NextHop)
		if err != nil {
			return nil, invalidInput("Invalid data format for hostroute: '%s' is not a valid IP address.", r.NextHop)
		}
		out = append(out, HostRoute{Destination: d.Masked().String(), NextHop: n.String()})
	}
	return out, nil
}

// DefaultSecurityGroupRules are the rules Neutron gives a project's
// default group: all egress, and ingress from members of the group
// itself, for IPv4 and IPv6. ids are the four rule ids.
func DefaultSecurityGroupRules(groupID, projectID string, ids [4]string) []*SecurityGroupRule {
	return []*SecurityGroupRule{
		{ID: ids[0], SecurityGroupID: groupID, ProjectID: projectID, Direction: DirectionEgress, EtherType: EtherTypeIPv4},
		{ID: ids[1], SecurityGroupID: groupID, ProjectID: projectID, Direction: DirectionEgress, EtherType: EtherTypeIPv6},
		{ID: ids[2], SecurityGroupID: groupID, ProjectID: projectID, Direction: DirectionIngress, EtherType: EtherTypeIPv4, RemoteGroupID: groupID},
		{ID: ids[3], SecurityGroupID: groupID, ProjectID: projectID, Direction: DirectionIngress, EtherType: EtherTypeIPv6, RemoteGroupID: groupID},
	}
}

// NewSecurityGroupRules are the rules Neutron gives any other new
// group: all egress, IPv4 and IPv6.
func NewSecurityGroupRules(groupID, projectID string, ids [2]string) []*SecurityGroupRule {
	return []*SecurityGroupRule{
		{ID: ids[0], SecurityGroupID: groupID, ProjectID: projectID, Direction: DirectionEgress, EtherType: EtherTypeIPv4},
		{ID: ids[1], SecurityGroupID: groupID, ProjectID: projectID, Direction: DirectionEgress, EtherType: EtherTypeIPv6},
	}
}
