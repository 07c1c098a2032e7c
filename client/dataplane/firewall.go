package dataplane

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// The nftables rules live in three tables per plane, each replaced
// atomically by one `nft -f` transaction:
//
//   - inet <prefix>: the security groups. With br_netfilter, bridged
//     IPv4/IPv6 traffic passes the inet hooks with the bridge as its
//     device, so a port's traffic is told by its bridge and address:
//     from the port (iifname bridge, saddr the port's) in forward and
//     input, to the port (oifname bridge, daddr the port's) in forward
//     and output. Egress chains run first; allowed traffic returns to
//     the base chain, refused is dropped, replies of allowed
//     connections pass (conntrack).
//   - bridge <prefix>_l2: anti-spoofing per tap: the port's MACs, and
//     its addresses (and allowed address pairs) as sources of IP and
//     ARP, DHCP discovery from 0.0.0.0.
//   - ip <prefix>_nat: floating IPs (DNAT in, SNAT out), routers' SNAT
//     and the metadata address redirected to the metadata listener.

// chainID is the short id of a port in chain names.
func chainID(portID string) string {
	id := strings.NewReplacer("-", "").Replace(portID)
	if len(id) > 16 {
		id = id[:16]
	}
	return id
}

// family is the nft match prefix of an address: ip or ip6.
func family(a netip.Addr) string {
	if a.Is4() {
		return "ip"
	}
	return "ip6"
}

// renderFilter renders the security-group table.
func renderFilter(table string, d *Desired) string {
	var b strings.Builder
	fmt.Fprintf(&b, "table inet %s {\n", table)
	var fwdOut, fwdIn, input, output []string
	for _, p := range d.Ports {
		if !p.PortSecurity {
			continue
		}
		br := BridgeName(p.NetworkID)
		id := chainID(p.ID)
		for _, ip := range p.IPs {
			a, err := netip.ParseAddr(ip)
			if err != nil {
				continue
			}
			fam := family(a)
			from := fmt.Sprintf("iifname %q %s saddr %s jump out_%s", br, fam, a, id)
			to := fmt.Sprintf("oifname %q %s daddr %s jump in_%s", br, fam, a, id)
			fwdOut, fwdIn = append(fwdOut, from), append(fwdIn, to)
			input, output = append(input, from), append(output, to)
		}
		writeChain(&b, "out_"+id, portChain(&p, "egress"))
		writeChain(&b, "in_"+id, portChain(&p, "ingress"))
	}
	writeBase(&b, "forward", "filter hook forward priority 0; policy accept;", append(fwdOut, fwdIn...))
	writeBase(&b, "input", "filter hook input priority 0; policy accept;", input)
	writeBase(&b, "output", "filter hook output priority 0; policy accept;", output)
	b.WriteString("}\n")
	return b.String()
}

func writeChain(b *strings.Builder, name string, rules []string) {
	fmt.Fprintf(b, "  chain %s {\n", name)
	for _, r := range rules {
		fmt.Fprintf(b, "    %s\n", r)
	}
	b.WriteString("  }\n")
}

func writeBase(b *strings.Builder, name, hook string, rules []string) {
	writeChain(b, name, append([]string{"type " + hook}, rules...))
}

// portChain is a port's chain of one direction: replies pass, DHCP and
// IPv6 neighbour discovery pass, then the rules, then drop.
func portChain(p *Port, dir string) []string {
	rules := []string{"ct state established,related return", "ct state invalid drop"}
	if dir == "egress" {
		rules = append(rules, "meta nfproto ipv4 udp sport 68 udp dport 67 return",
			"meta nfproto ipv6 udp sport 546 udp dport 547 return")
	} else {
		rules = append(rules, "meta nfproto ipv4 udp sport 67 udp dport 68 return",
			"meta nfproto ipv6 udp sport 547 udp dport 546 return")
	}
	rules = append(rules, "icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-advert, nd-router-solicit } return")
	for _, r := range p.Rules {
		if r.Direction != dir {
			continue
		}
		if s := ruleMatch(&r); s != "" {
			rules = append(rules, s+" return")
		}
	}
	return append(rules, "drop")
}

// ruleMatch renders a rule's match, or "" when it can match nothing.
func ruleMatch(r *Rule) string {
	fam, proto := "ip", "ipv4"
	if r.EtherType == "IPv6" {
		fam, proto = "ip6", "ipv6"
	}
	parts := []string{"meta nfproto " + proto}
	if !r.AnyRemote {
		var remotes []string
		for _, rem := range r.Remotes {
			pfx, err := netip.ParsePrefix(rem)
			if err != nil {
				a, err2 := netip.ParseAddr(rem)
				if err2 != nil {
					continue
				}
				pfx = netip.PrefixFrom(a, a.BitLen())
			}
			if (fam == "ip") != pfx.Addr().Is4() {
				continue
			}
			remotes = append(remotes, pfx.Masked().String())
		}
		if len(remotes) == 0 {
			return ""
		}
		side := "saddr"
		if r.Direction == "egress" {
			side = "daddr"
		}
		parts = append(parts, fmt.Sprintf("%s %s { %s }", fam, side, strings.Join(sortedUnique(remotes), ", ")))
	}
	p, ok := protoMatch(r, fam)
	if !ok {
		return ""
	}
	return strings.Join(append(parts, p...), " ")
}

// protoMatch renders a rule's protocol and ports.
func protoMatch(r *Rule, fam string) ([]string, bool) {
	proto := strings.ToLower(r.Protocol)
	switch proto {
	case "", "any":
		return nil, true
	case "icmp", "1":
		if fam == "ip6" {
			proto = "ipv6-icmp"
		}
	case "icmpv6", "ipv6-icmp", "58":
		proto = "ipv6-icmp"
	case "6":
		proto = "tcp"
	case "17":
		proto = "udp"
	case "132":
		proto = "sctp"
	}
	out := []string{"meta l4proto " + proto}
	switch proto {
	case "tcp", "udp", "sctp", "dccp", "udplite":
		if r.PortMin != nil {
			max := *r.PortMin
			if r.PortMax != nil {
				max = *r.PortMax
			}
			rng := strconv.Itoa(*r.PortMin)
			if max != *r.PortMin {
				rng += "-" + strconv.Itoa(max)
			}
			out = append(out, "th dport "+rng)
		}
	case "icmp", "ipv6-icmp":
		kw := "icmp"
		if proto == "ipv6-icmp" {
			kw = "icmpv6"
		}
		if r.PortMin != nil {
			out = append(out, fmt.Sprintf("%s type %d", kw, *r.PortMin))
			if r.PortMax != nil {
				out = append(out, fmt.Sprintf("%s code %d", kw, *r.PortMax))
			}
		}
	default:
		if _, err := strconv.Atoi(proto); err != nil && !knownProto[proto] {
			return nil, false
		}
	}
	return out, true
}

// knownProto are protocol names nft knows besides those above.
var knownProto = map[string]bool{"gre": true, "esp": true, "ah": true, "ospf": true, "vrrp": true,
	"pgm": true, "igmp": true, "ipip": true, "ipencap": true, "l2tp": true}

// renderL2 renders the anti-spoofing table.
func renderL2(table string, d *Desired) string {
	var b strings.Builder
	fmt.Fprintf(&b, "table bridge %s {\n", table)
	var jumps []string
	for _, p := range d.Ports {
		if !p.PortSecurity {
			continue
		}
		tap, id := TapName(p.ID), chainID(p.ID)
		jumps = append(jumps, fmt.Sprintf("iifname %q jump spoof_%s", tap, id))
		macs := []string{strings.ToLower(p.MAC)}
		var v4, v6 []string
		addIP := func(s string) {
			pfx, err := netip.ParsePrefix(s)
			if err != nil {
				a, err2 := netip.ParseAddr(s)
				if err2 != nil {
					return
				}
				pfx = netip.PrefixFrom(a, a.BitLen())
			}
			if pfx.Addr().Is4() {
				v4 = append(v4, pfx.Masked().String())
			} else {
				v6 = append(v6, pfx.Masked().String())
			}
		}
		for _, ip := range p.IPs {
			addIP(ip)
		}
		for _, pair := range p.AllowedPairs {
			addIP(pair.IPAddress)
			if pair.MACAddress != "" && validMAC(pair.MACAddress) {
				macs = append(macs, strings.ToLower(pair.MACAddress))
			}
		}
		v6 = append(v6, "fe80::/10")
		rules := []string{fmt.Sprintf("ether saddr != { %s } drop", strings.Join(sortedUnique(macs), ", "))}
		if len(v4) > 0 {
			set := strings.Join(sortedUnique(v4), ", ")
			rules = append(rules,
				fmt.Sprintf("ether type arp arp saddr ip { %s } return", set),
				"ether type arp arp saddr ip 0.0.0.0 return",
				fmt.Sprintf("ether type ip ip saddr { %s } return", set))
		}
		rules = append(rules,
			"ether type arp drop",
			"ether type ip ip saddr 0.0.0.0 udp sport 68 udp dport 67 return",
			"ether type ip drop",
			fmt.Sprintf("ether type ip6 ip6 saddr { %s } return", strings.Join(sortedUnique(v6), ", ")),
			"ether type ip6 ip6 saddr :: return",
			"ether type ip6 drop")
		writeChain(&b, "spoof_"+id, rules)
	}
	writeBase(&b, "forward", "filter hook forward priority -200; policy accept;", jumps)
	writeBase(&b, "input", "filter hook input priority -200; policy accept;", jumps)
	writeOverlayGuards(&b, d)
	b.WriteString("}\n")
	return b.String()
}

// renderNAT renders the NAT table: the metadata redirect on every
// network bridge that has an IPv4 subnet, floating IPs and routers'
// SNAT.
func (p *Plane) renderNAT(table string, d *Desired) string {
	var pre, out, post []string
	target := "redirect to :" + strconv.Itoa(p.cfg.MetadataPort)
	if p.cfg.MetadataIP != "" {
		target = fmt.Sprintf("dnat to %s:%d", p.cfg.MetadataIP, p.cfg.MetadataPort)
	}
	for _, n := range d.Networks {
		if n.External || !hasV4(&n) || p.cfg.MetadataPort <= 0 {
			continue
		}
		pre = append(pre, fmt.Sprintf("iifname %q ip daddr 169.254.169.254 tcp dport 80 %s", BridgeName(n.ID), target))
	}
	rt := p.planRouting(d)
	for _, f := range d.FloatingIPs {
		fip, err1 := netip.ParseAddr(f.Address)
		fixed, err2 := netip.ParseAddr(f.FixedIP)
		if err1 != nil || err2 != nil || !fip.Is4() || !fixed.Is4() {
			continue
		}
		// The table mark sends the replies and the inbound connections,
		// un-NATed, to the fixed address's router's table.
		mark, from := "", ""
		if port := d.port(f.PortID); port != nil {
			from = fmt.Sprintf("iifname %q ", BridgeName(port.NetworkID))
			if t := rt.fipTable(d, port.NetworkID, f.FixedIP); t != 0 {
				mark = fmt.Sprintf("ct mark set %#x ", t)
				pre = append(pre, fmt.Sprintf("ip daddr %s meta mark set %#x %sdnat to %s", fip, t, mark, fixed))
			}
		}
		if mark == "" {
			pre = append(pre, fmt.Sprintf("ip daddr %s dnat to %s", fip, fixed))
		}
		out = append(out, fmt.Sprintf("ip daddr %s dnat to %s", fip, fixed))
		post = append(post, fmt.Sprintf("%sip saddr %s oifname %q %ssnat to %s", from, fixed, BridgeName(f.ExternalNetworkID), mark, fip))
	}
	post = append(post, p.snatRules(d, rt)...)
	var b strings.Builder
	fmt.Fprintf(&b, "table ip %s {\n", table)
	writeBase(&b, "restore_mark", "filter hook prerouting priority mangle; policy accept;",
		[]string{fmt.Sprintf("ct mark and %#x == %#x meta mark set ct mark", uint32(tableMask), uint32(tableBase))})
	writeBase(&b, "prerouting", "nat hook prerouting priority dstnat; policy accept;", pre)
	writeBase(&b, "output", "nat hook output priority -100; policy accept;", out)
	writeBase(&b, "postrouting", "nat hook postrouting priority srcnat; policy accept;", post)
	b.WriteString("}\n")
	return b.String()
}

// snatRules are the source NAT of the routers whose gateway this host
// holds: each subnet, told by the bridge it comes in on (two tenants
// may share a CIDR), behind the gateway address, its connections
// marked with the router's table for their replies.
func (p *Plane) snatRules(d *Desired, rt *routing) []string {
	var out []string
	for i := range d.Routers {
		r := &d.Routers[i]
		if !p.holdsSNAT(r) || d.network(r.ExternalNetworkID) == nil {
			continue
		}
		for _, ifc := range r.Interfaces {
			pfx, err := netip.ParsePrefix(ifc.CIDR)
			t, ok := rt.tables[routerTableKey(r.ID, ifc.NetworkID)]
			if err != nil || !ok {
				continue
			}
			out = append(out, fmt.Sprintf("iifname %q ip saddr %s oifname %q ct mark set %#x snat to %s",
				BridgeName(ifc.NetworkID), pfx.Masked(), BridgeName(r.ExternalNetworkID), t, r.GatewayIP))
		}
	}
	return out
}

// hasV4 reports whether a network has an IPv4 subnet with a gateway.
func hasV4(n *Network) bool {
	for _, s := range n.Subnets {
		if s.IPVersion == 4 && s.GatewayIP != "" {
			return true
		}
	}
	return false
}
