package dataplane

import (
	"crypto/sha256"
	"net/netip"
	"sort"

	"github.com/stratus-cloud/stratus/structs"
)

// snatHost is the host elected to hold a router's gateway and SNAT.
type snatHost struct {
	id, tunnelIP string
	// otherNets are the ports of the router's networks the host
	// building the state has no port on, by network.
	otherNets map[string]*structs.NetListResponse
}

// snatHost elects the host carrying a router's SNAT and gateway
// address. Floating IPs are distributed (each host NATs its own ports'
// on its own external bridge), but a router has one gateway address:
// held by several hosts on one external L2 it would answer ARP from all
// of them and its connections would break. So one host is elected
// among those with instance ports on the router's networks, the same on
// every host since each reads the same state: the highest rendezvous
// hash of router and host, which moves the fewest routers when hosts
// come and go. The other hosts send what leaves without a floating IP
// over the network to it (routing_plan.go).
func (b *builder) snatHost(routerID string) (*snatHost, error) {
	rports, err := netList(b.rpc, &structs.NetListRequest{Kind: structs.NetKindPort, DeviceIDs: []string{routerID}})
	if err != nil {
		return nil, err
	}
	served := map[string]bool{}
	for _, p := range b.netPorts {
		served[p.NetworkID] = true
	}
	out := &snatHost{otherNets: map[string]*structs.NetListResponse{}}
	hosts := map[string]string{}
	addHosts := func(ports []*structs.Port, bindings map[string]*structs.PortBinding) {
		for _, p := range ports {
			if bd := bindings[p.ID]; p.IsCompute() && bd != nil && bd.HostID != "" {
				if hosts[bd.HostID] == "" {
					hosts[bd.HostID] = bd.TunnelIP
				}
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
		ports, err := netList(b.rpc, &structs.NetListRequest{Kind: structs.NetKindPort, NetworkID: rp.NetworkID})
		if err != nil {
			return nil, err
		}
		out.otherNets[rp.NetworkID] = ports
		addHosts(ports.Ports, ports.Bindings)
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
	out.id = electHost(routerID, ids)
	out.tunnelIP = hosts[out.id]
	return out, nil
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
