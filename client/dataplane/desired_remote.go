package dataplane

import "sort"

// remotePorts adds the instance ports of the host's networks that are
// bound to other hosts with a tunnel endpoint: the overlay's
// forwarding and neighbour entries (l2population). A host without an
// endpoint takes no part in the overlay, so its ports are left out.
func (b *builder) remotePorts(hostID string) {
	for _, p := range b.netPorts {
		bd := b.bindings[p.ID]
		if !p.IsCompute() || bd == nil || bd.HostID == "" || bd.HostID == hostID || bd.TunnelIP == "" {
			continue
		}
		r := RemotePort{ID: p.ID, NetworkID: p.NetworkID, MAC: p.MACAddress, HostID: bd.HostID, TunnelIP: bd.TunnelIP}
		for _, ip := range p.FixedIPs {
			r.IPs = append(r.IPs, ip.IPAddress)
		}
		b.d.Remote = append(b.d.Remote, r)
	}
	sort.Slice(b.d.Remote, func(i, j int) bool { return b.d.Remote[i].ID < b.d.Remote[j].ID })
}
