package dataplane

import (
	"crypto/sha256"
	"net/netip"
	"sort"

	"github.com/stratus-cloud/stratus/structs"
)

// holdsSNAT reports whether this host carries a router's SNAT and
// gateway address. Floating IPs are distributed (each host NATs its own
// ports' on its own external bridge), but a router has one gateway
// address: held by several hosts on one external L2 it would answer
// ARP from all of them and its connections would break. So one host is
// elected among those with instance ports on the router's networks, the
// same on every host since each reads the same state: the highest
// rendezvous hash of router and host, which moves the fewest routers
// when hosts come and go.
func (b *builder) holdsSNAT(routerID string) (bool, error) {
	rports, err := netList(b.rpc, &structs.NetListRequest{Kind: structs.NetKindPort, DeviceIDs: []string{routerID}})
	if err != nil {
		return false, err
	}
	served := map[string]bool{}
	for _, p := range b.netPorts {
		served[p.NetworkID] = true
	}
	hosts := map[string]bool{}
	addHosts := func(ports []*structs.Port, bindings map[string]*structs.PortBinding) {
		for _, p := range ports {
			if bd := bindings[p.ID]; p.IsCompute() && bd != nil && bd.HostID != "" {
				hosts[bd.HostID] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, rp := range rports.Ports {
		if rp.DeviceOwner != structs.DeviceOwnerRouterInterface || seen[rp.NetworkID] {
			continue
		}
		seen[rp.NetworkID] = true
		if served[rp.NetworkID] {
			continue
		}
		out, err := netList(b.rpc, &structs.NetListRequest{Kind: structs.NetKindPort, NetworkID: rp.NetworkID})
		if err != nil {
			return false, err
		}
		addHosts(out.Ports, out.Bindings)
	}
	var mine []*structs.Port
	for _, p := range b.netPorts {
		if seen[p.NetworkID] {
			mine = append(mine, p)
		}
	}
	addHosts(mine, b.bindings)
	ids := make([]string, 0, len(hosts))
	for h := range hosts {
		ids = append(ids, h)
	}
	return electHost(routerID, ids) == b.hostID, nil
}

// electHost picks a router's host among candidates by rendezvous
// hashing ("" for none).
func electHost(routerID string, hosts []string) string {
	sort.Strings(hosts)
	best, bestSum := "", [32]byte{}
	for _, h := range hosts {
		sum := sha256.Sum256([]byte(routerID + "/" + h))
		if best == "" || string(sum[:]) > string(bestSum[:]) {
			best, bestSum = h, sum
		}
	}
	return best
}

// onLink lists the subnets of an external network the bridge holds no
// address in with the subnet's prefix length (only floating IPs, /32):
// they are routed out of the bridge all the same, so the floating IPs'
// replies find the outside.
func onLink(subnets []Subnet, addresses []string) []string {
	var out []string
	for _, s := range subnets {
		pfx, err := netip.ParsePrefix(s.CIDR)
		if err != nil || !pfx.Addr().Is4() {
			continue
		}
		covered := false
		for _, a := range addresses {
			if ap, err := netip.ParsePrefix(a); err == nil && ap.Bits() == pfx.Bits() && pfx.Contains(ap.Addr()) {
				covered = true
			}
		}
		if !covered {
			out = append(out, pfx.Masked().String())
		}
	}
	return out
}
