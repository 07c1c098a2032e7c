package dataplane

import (
	"crypto/sha256"
	"fmt"
	"hash/fnv"
	"net/netip"
	"sort"
	"strconv"
)

// Tenant traffic is routed by policy, never by the host's main table,
// as Neutron routes it in a router's namespace:
//
//   - every (router, tenant network) pair on the host has its own
//     routing table: the router's subnets on the host (east-west), and
//     a default route — out of the external bridge to the external
//     subnet's gateway on the host holding the router's SNAT, or over
//     the network's bridge (and so the overlay) to the SNAT host's
//     bridge everywhere else (Neutron DVR's sg- port: instances without
//     a floating IP leave through the centralised SNAT);
//   - an ip rule per router subnet sends what comes in on the
//     network's bridge from that subnet to that table, so two tenants
//     with the same CIDR on one host route independently;
//   - a fixed address with a floating IP here looks up the router's
//     table without its default route (east-west), then the external
//     network's table (out through its own NAT);
//   - what a tenant bridge brings in that no rule took is unreachable:
//     tenant traffic never leaves through the host's own routes
//     un-NATed;
//   - connections NATed here carry their table as conntrack mark, so
//     their replies coming in on the external bridge, un-NATed, find
//     the right tenant's table (fwmark rules).
//
// The plane owns the tables tableBase|n (n < 1<<16, also the marks) and
// the rules with a priority in [rulePrioFirst, rulePrioLast].
const (
	tableBase      = 0x53540000
	tableMask      = 0xffff0000
	rulePrioFirst  = 20000
	prioFIPEastW   = 20100
	prioFIPOut     = 20150
	prioSubnet     = 20200
	prioMetadata   = 20300
	prioMark       = 20400
	prioDrop       = 20500
	rulePrioLast   = 20999
	nextHopNetwork = "169.254.0.0/16"
)

// policyRule is an ip rule of the plane's.
type policyRule struct {
	Prio     int
	Src      string // prefix, "" for any
	Dst      string // prefix, "" for any
	IIF      string
	FWMark   uint32
	Table    uint32
	Action   string // "" (lookup Table or Lookup), unreachable
	Lookup   string // a named table (main) instead of Table
	Suppress bool   // suppress_prefixlength 0: no default route
}

// key identifies a rule as `ip -j rule show` reads it back.
func (r policyRule) key() string {
	target := r.Action
	if target == "" {
		target = r.Lookup
		if target == "" {
			target = strconv.FormatUint(uint64(r.Table), 10)
		}
	}
	return fmt.Sprintf("%d|%s|%s|%s|%#x|%s|%v", r.Prio, r.Src, r.Dst, r.IIF, r.FWMark, target, r.Suppress)
}

// args are the `ip rule add` arguments of a rule.
func (r policyRule) args() []string {
	a := []string{"-4", "rule", "add", "priority", strconv.Itoa(r.Prio)}
	if r.Src != "" {
		a = append(a, "from", r.Src)
	}
	if r.Dst != "" {
		a = append(a, "to", r.Dst)
	}
	if r.IIF != "" {
		a = append(a, "iif", r.IIF)
	}
	if r.FWMark != 0 {
		a = append(a, "fwmark", fmt.Sprintf("%#x", r.FWMark))
	}
	switch {
	case r.Action != "":
		a = append(a, r.Action)
	case r.Lookup != "":
		a = append(a, "lookup", r.Lookup)
	default:
		a = append(a, "lookup", strconv.FormatUint(uint64(r.Table), 10))
	}
	if r.Suppress {
		a = append(a, "suppress_prefixlength", "0")
	}
	return a
}

// tableRoute is a route in one of the plane's tables.
type tableRoute struct {
	Table uint32
	Dst   string // prefix or "default"
	Via   string // "" for on-link
	Dev   string
}

func (r tableRoute) key() string { return fmt.Sprintf("%d|%s|%s|%s", r.Table, r.Dst, r.Via, r.Dev) }

// routing is the policy routing a Desired state needs.
type routing struct {
	// tables by key: "r/<router>/<network>" and "e/<external network>".
	tables map[string]uint32
	rules  []policyRule
	routes []tableRoute
	// nextHops are the permanent neighbour entries of the bridges: the
	// SNAT host's bridge MAC behind each table's next hop, by bridge.
	nextHops map[string]map[string]string
}

// routerTableKey and extTableKey name the tables.
func routerTableKey(routerID, networkID string) string { return "r/" + routerID + "/" + networkID }
func extTableKey(networkID string) string              { return "e/" + networkID }

// holdsSNAT reports whether this plane's host holds a router's gateway
// and source NAT.
func (p *Plane) holdsSNAT(r *Router) bool {
	return r.SNAT && r.GatewayIP != "" && r.ExternalNetworkID != "" && r.SNATHostID == p.cfg.Owner
}

// planRouting works out the tables, routes, rules and next hops of d.
func (p *Plane) planRouting(d *Desired) *routing {
	rt := &routing{tables: allocTables(routingKeys(d)), nextHops: map[string]map[string]string{}}
	for i := range d.Routers {
		p.planRouter(rt, d, &d.Routers[i])
	}
	for _, n := range d.Networks {
		if t, ok := rt.tables[extTableKey(n.ID)]; ok {
			rt.routes = append(rt.routes, externalRoutes(t, &n)...)
		}
	}
	p.planFloatingIPs(rt, d)
	for _, n := range d.Networks {
		// Every tenant bridge, with a gateway address or not: a guest
		// that learnt the bridge's MAC could route through it all the
		// same.
		if n.External {
			continue
		}
		br := BridgeName(n.ID)
		if p.cfg.MetadataIP != "" {
			rt.rules = append(rt.rules, policyRule{Prio: prioMetadata, Dst: hostPrefix(p.cfg.MetadataIP), IIF: br, Lookup: "main"})
		}
		rt.rules = append(rt.rules, policyRule{Prio: prioDrop, IIF: br, Action: "unreachable"})
	}
	return rt
}

// planRouter adds a router's tables: one per network it has an
// interface on here.
func (p *Plane) planRouter(rt *routing, d *Desired, r *Router) {
	held := p.holdsSNAT(r)
	ext := d.network(r.ExternalNetworkID)
	for _, netID := range routerNetworks(d, r) {
		t := rt.tables[routerTableKey(r.ID, netID)]
		br := BridgeName(netID)
		for _, ifc := range r.Interfaces {
			if d.network(ifc.NetworkID) == nil {
				continue
			}
			rt.routes = append(rt.routes, tableRoute{Table: t, Dst: ifc.CIDR, Dev: BridgeName(ifc.NetworkID)})
			if ifc.NetworkID == netID {
				// The second rule is for the kernel's reverse-path
				// check of what leaves by the bridge it came in on (to
				// the SNAT host): that lookup has the bridge as iif
				// and the sender as destination, and would otherwise
				// end on the unreachable rule.
				rt.rules = append(rt.rules, policyRule{Prio: prioSubnet, Src: ifc.CIDR, IIF: br, Table: t},
					policyRule{Prio: prioSubnet, Dst: ifc.CIDR, IIF: br, Table: t})
			}
		}
		switch {
		case held && ext != nil:
			rt.routes = append(rt.routes, externalRoutes(t, ext)...)
			rt.rules = append(rt.rules, policyRule{Prio: prioMark, FWMark: t, IIF: BridgeName(ext.ID), Table: t})
		case r.SNAT && r.SNATHostID != "" && r.SNATHostID != p.cfg.Owner:
			nh := nextHop(t)
			rt.routes = append(rt.routes, tableRoute{Table: t, Dst: "default", Via: nh, Dev: br})
			if rt.nextHops[br] == nil {
				rt.nextHops[br] = map[string]string{}
			}
			rt.nextHops[br][nh] = BridgeMAC(netID, r.SNATHostID)
		}
	}
}

// planFloatingIPs adds the rules of the fixed addresses with a
// floating IP here: the router's table without its default route, then
// the external network's table.
func (p *Plane) planFloatingIPs(rt *routing, d *Desired) {
	for _, f := range d.FloatingIPs {
		port := d.port(f.PortID)
		e, ok := rt.tables[extTableKey(f.ExternalNetworkID)]
		if port == nil || !ok {
			continue
		}
		br, src := BridgeName(port.NetworkID), hostPrefix(f.FixedIP)
		if t := rt.fipTable(d, port.NetworkID, f.FixedIP); t != 0 {
			rt.rules = append(rt.rules,
				policyRule{Prio: prioFIPEastW, Src: src, IIF: br, Table: t, Suppress: true},
				policyRule{Prio: prioMark, FWMark: t, IIF: BridgeName(f.ExternalNetworkID), Table: t})
		}
		rt.rules = append(rt.rules, policyRule{Prio: prioFIPOut, Src: src, IIF: br, Table: e})
	}
}

// fipTable is the table of the router serving a fixed address on a
// network (0 for none).
func (rt *routing) fipTable(d *Desired, networkID, fixed string) uint32 {
	a, err := netip.ParseAddr(fixed)
	if err != nil {
		return 0
	}
	for _, r := range d.Routers {
		for _, ifc := range r.Interfaces {
			if pfx, err := netip.ParsePrefix(ifc.CIDR); err == nil && ifc.NetworkID == networkID && pfx.Contains(a) {
				return rt.tables[routerTableKey(r.ID, networkID)]
			}
		}
	}
	return 0
}

// externalRoutes are an external network's subnets on-link out of its
// bridge and the default route to its first subnet's gateway.
func externalRoutes(t uint32, ext *Network) []tableRoute {
	br := BridgeName(ext.ID)
	var out []tableRoute
	gw := ""
	for _, s := range ext.Subnets {
		pfx, err := netip.ParsePrefix(s.CIDR)
		if err != nil || !pfx.Addr().Is4() {
			continue
		}
		out = append(out, tableRoute{Table: t, Dst: pfx.Masked().String(), Dev: br})
		if gw == "" && s.GatewayIP != "" {
			gw = s.GatewayIP
		}
	}
	if gw != "" {
		out = append(out, tableRoute{Table: t, Dst: "default", Via: gw, Dev: br})
	}
	return out
}

// routerNetworks are the networks a router has an IPv4 interface on
// that are on the host.
func routerNetworks(d *Desired, r *Router) []string {
	var out []string
	for _, ifc := range r.Interfaces {
		if n := d.network(ifc.NetworkID); n != nil && !n.External {
			out = append(out, ifc.NetworkID)
		}
	}
	return sortedUnique(out)
}

// routingKeys are the tables d needs.
func routingKeys(d *Desired) []string {
	var keys []string
	for i := range d.Routers {
		r := &d.Routers[i]
		for _, netID := range routerNetworks(d, r) {
			keys = append(keys, routerTableKey(r.ID, netID))
		}
	}
	for _, f := range d.FloatingIPs {
		if d.network(f.ExternalNetworkID) != nil {
			keys = append(keys, extTableKey(f.ExternalNetworkID))
		}
	}
	return sortedUnique(keys)
}

// allocTables numbers the tables: a hash of the key in the low 16
// bits, probing on collision, so a table keeps its number while others
// come and go. Numbers whose next hop would fall in 169.254.169.0/24
// (the metadata address's) are skipped.
func allocTables(keys []string) map[string]uint32 {
	out := make(map[string]uint32, len(keys))
	used := map[uint32]bool{}
	sort.Strings(keys)
	for _, k := range keys {
		h := fnv.New32a()
		_, _ = h.Write([]byte(k))
		n := h.Sum32() & 0xffff
		for n == 0 || n>>8 == 169 || used[n] {
			n = (n + 1) & 0xffff
		}
		used[n] = true
		out[k] = tableBase | n
	}
	return out
}

// nextHop is the on-link next hop of a table's default route towards
// the SNAT host: an address of 169.254.0.0/16 that only the table's
// bridge's permanent neighbour entry resolves (to the SNAT host's
// bridge MAC); no host holds it, the SNAT host routes what it gets.
func nextHop(table uint32) string {
	n := table &^ tableMask
	return fmt.Sprintf("169.254.%d.%d", n>>8, n&0xff)
}

// BridgeMAC is the MAC of a host's bridge of a tenant network: a
// locally administered address hashed from both, so every host knows
// the SNAT host's bridge on a network without asking it.
func BridgeMAC(networkID, hostID string) string {
	sum := sha256.Sum256([]byte(networkID + "/" + hostID))
	sum[0] = sum[0]&0xfc | 0x02
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", sum[0], sum[1], sum[2], sum[3], sum[4], sum[5])
}

// hostPrefix is an address as a host prefix ("10.0.0.5/32").
func hostPrefix(a string) string {
	ad, err := netip.ParseAddr(a)
	if err != nil {
		return a
	}
	return netip.PrefixFrom(ad, ad.BitLen()).String()
}

// port returns the desired port of an id, or nil.
func (d *Desired) port(id string) *Port {
	for i := range d.Ports {
		if d.Ports[i].ID == id {
			return &d.Ports[i]
		}
	}
	return nil
}

// validateRouters checks the routers' interfaces and addresses.
func (d *Desired) validateRouters() error {
	for _, r := range d.Routers {
		if r.ID == "" {
			return fmt.Errorf("router without an id")
		}
		for _, ifc := range r.Interfaces {
			if pfx, err := netip.ParsePrefix(ifc.CIDR); err != nil || !pfx.Addr().Is4() {
				return fmt.Errorf("router %s: bad IPv4 subnet %q", r.ID, ifc.CIDR)
			}
		}
		if r.GatewayIP != "" {
			if a, err := netip.ParseAddr(r.GatewayIP); err != nil || !a.Is4() {
				return fmt.Errorf("router %s: bad gateway address %q", r.ID, r.GatewayIP)
			}
		}
	}
	return nil
}
