package dataplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// VXLANPort is the UDP port of the overlay (IANA's 4789).
const VXLANPort = 4789

// maxVNI is the largest 24-bit VXLAN network identifier.
const maxVNI = 1<<24 - 1

// RemotePort is a port of one of the host's networks bound to another
// host: its MAC and addresses, and the tunnel endpoint of its host.
type RemotePort struct {
	ID        string
	NetworkID string
	MAC       string
	IPs       []string
	HostID    string
	TunnelIP  string
}

// VXLANName is the VXLAN device of a network: vx- + the network id's
// first 11 characters.
func VXLANName(networkID string) string { return devName("vx-", networkID) }

// validateRemote checks the remote ports against the listed networks,
// and the networks' on-link prefixes.
func (d *Desired) validateRemote(ids map[string]bool) error {
	if err := d.validateOnLink(); err != nil {
		return err
	}
	for _, r := range d.Remote {
		if !ids[r.NetworkID] {
			return fmt.Errorf("remote port %s on network %s, which is not listed", r.ID, r.NetworkID)
		}
		if !validMAC(r.MAC) {
			return fmt.Errorf("remote port %s: bad MAC %q", r.ID, r.MAC)
		}
		if err := structs.ValidTunnelIP(r.TunnelIP); err != nil {
			return fmt.Errorf("remote port %s: %w", r.ID, err)
		}
		for _, ip := range r.IPs {
			if !validIP(ip) {
				return fmt.Errorf("remote port %s: bad address %q", r.ID, ip)
			}
		}
	}
	return nil
}

// overlaid reports whether a network gets a VXLAN device here: a VXLAN
// network with its VNI, on a plane with a tunnel endpoint.
func (p *Plane) overlaid(n *Network) bool {
	return p.cfg.TunnelIP != "" && n.Type == structs.NetTypeVXLAN && n.SegmentationID > 0 && n.SegmentationID <= maxVNI
}

// ipLinkDetail is the part of `ip -d -j link show` the overlay reads.
type ipLinkDetail struct {
	IfName   string `json:"ifname"`
	LinkInfo struct {
		InfoKind string `json:"info_kind"`
		InfoData struct {
			ID    int    `json:"id"`
			Local string `json:"local"`
			Port  int    `json:"port"`
		} `json:"info_data"`
	} `json:"linkinfo"`
}

// ensureOverlay wires the host's side of its networks beyond the host:
// provider networks' uplinks, external subnets' on-link routes, and for
// each VXLAN network a VXLAN
// device on its bridge with forwarding and neighbour entries to the
// hosts of the network's other ports (fdb.go).
func (p *Plane) ensureOverlay(ctx context.Context, d *Desired, links map[string]ipLink) error {
	var errs []error
	if err := p.ensureUplinks(ctx, d, links); err != nil {
		errs = append(errs, err)
	}
	remote := p.remoteByNetwork(d)
	for i := range d.Networks {
		n := &d.Networks[i]
		if err := p.ensureOnLink(ctx, n); err != nil {
			errs = append(errs, err)
		}
		if !p.overlaid(n) {
			continue
		}
		if err := p.ensureVXLAN(ctx, n, links); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := p.programFDB(ctx, VXLANName(n.ID), remote[n.ID]); err != nil {
			errs = append(errs, err)
		}
		if err := p.programNeighbours(ctx, VXLANName(n.ID), remote[n.ID]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// remoteByNetwork groups the remote ports by network, leaving out those
// of hosts sharing this plane's tunnel endpoint (they are local). The
// bridge of a router's SNAT host on each of the router's networks
// counts as a remote port: its MAC is where the router's tables send
// what leaves without a floating IP (routing_plan.go).
func (p *Plane) remoteByNetwork(d *Desired) map[string][]RemotePort {
	out := map[string][]RemotePort{}
	for _, r := range d.Remote {
		if r.TunnelIP != p.cfg.TunnelIP {
			out[r.NetworkID] = append(out[r.NetworkID], r)
		}
	}
	for _, r := range d.Routers {
		if !r.SNAT || r.SNATHostID == "" || r.SNATHostID == p.cfg.Owner || r.SNATTunnelIP == "" || r.SNATTunnelIP == p.cfg.TunnelIP {
			continue
		}
		for _, netID := range routerNetworks(d, &r) {
			out[netID] = append(out[netID], RemotePort{ID: "snat:" + r.ID, NetworkID: netID, MAC: BridgeMAC(netID, r.SNATHostID),
				HostID: r.SNATHostID, TunnelIP: r.SNATTunnelIP})
		}
	}
	return out
}

// ensureVXLAN makes a network's VXLAN device: its VNI, this host's
// endpoint as local address, no learning (the entries come from the
// state), ARP/ND answered from the neighbour entries (proxy), the
// network's MTU, on its bridge and up. A device of ours whose VNI,
// endpoint or port differ is made anew.
func (p *Plane) ensureVXLAN(ctx context.Context, n *Network, links map[string]ipLink) error {
	dev, br := VXLANName(n.ID), BridgeName(n.ID)
	if _, ok := links[dev]; ok {
		same, err := p.vxlanMatches(ctx, dev, n.SegmentationID)
		if err != nil {
			return err
		}
		if !same {
			if _, err := p.run.run(ctx, "ip", "link", "del", "dev", dev); err != nil {
				return fmt.Errorf("network %s: replace VXLAN device: %w", n.ID, err)
			}
			delete(links, dev)
		}
	}
	if _, ok := links[dev]; !ok {
		if _, err := p.run.run(ctx, "ip", "link", "add", dev, "type", "vxlan", "id", strconv.Itoa(n.SegmentationID),
			"local", p.cfg.TunnelIP, "dstport", strconv.Itoa(VXLANPort), "nolearning", "proxy"); err != nil {
			return fmt.Errorf("network %s: create VXLAN device: %w", n.ID, err)
		}
	}
	args := []string{"link", "set", "dev", dev, "alias", p.alias()}
	if n.MTU > 0 {
		args = append(args, "mtu", strconv.Itoa(n.MTU))
	}
	if _, err := p.run.run(ctx, "ip", append(args, "master", br, "up")...); err != nil {
		return fmt.Errorf("network %s: set up VXLAN device: %w", n.ID, err)
	}
	return nil
}

// vxlanMatches reports whether an existing device is a VXLAN device of
// the VNI from this plane's endpoint on the overlay's port.
func (p *Plane) vxlanMatches(ctx context.Context, dev string, vni int) (bool, error) {
	out, err := p.run.run(ctx, "ip", "-d", "-j", "link", "show", "dev", dev)
	if err != nil {
		return false, err
	}
	var ls []ipLinkDetail
	if err := json.Unmarshal([]byte(out), &ls); err != nil {
		return false, fmt.Errorf("read ip link output: %w", err)
	}
	if len(ls) != 1 {
		return false, nil
	}
	info := ls[0].LinkInfo
	return info.InfoKind == "vxlan" && info.InfoData.ID == vni && info.InfoData.Local == p.cfg.TunnelIP &&
		info.InfoData.Port == VXLANPort, nil
}

// removeStaleOverlay deletes the VXLAN devices and VLAN sub-interfaces
// the plane made that d has no network for.
func (p *Plane) removeStaleOverlay(ctx context.Context, d *Desired) error {
	var errs []error
	links, err := p.links(ctx, "vxlan")
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for i := range d.Networks {
		if p.overlaid(&d.Networks[i]) {
			want[VXLANName(d.Networks[i].ID)] = true
		}
	}
	for _, l := range links {
		if l.IfAlias != p.alias() || want[l.IfName] {
			continue
		}
		if _, err := p.run.run(ctx, "ip", "link", "del", "dev", l.IfName); err != nil {
			errs = append(errs, fmt.Errorf("dataplane: remove VXLAN device: %w", err))
		}
	}
	if err := p.removeStaleVLANs(ctx, d); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// writeOverlayGuards keeps what every host serves by itself off the
// overlay: each host's dnsmasq answers its own ports only (and is
// authoritative, so it would refuse another host's guest's renewal),
// and each host's bridge sends router advertisements as its subnets'
// gateway. DHCP and router discovery therefore never cross a VXLAN
// device, in either direction.
func writeOverlayGuards(b *strings.Builder, d *Desired) {
	overlay := false
	for _, n := range d.Networks {
		overlay = overlay || n.Type == structs.NetTypeVXLAN
	}
	if !overlay {
		return
	}
	vx := fmt.Sprintf("%q", VXLANName("")+"*")
	local := "udp dport { 67, 68, 546, 547 } drop"
	ra := "icmpv6 type { nd-router-advert, nd-router-solicit } drop"
	writeBase(b, "overlay_forward", "filter hook forward priority -210; policy accept;",
		[]string{"iifname " + vx + " " + local, "oifname " + vx + " " + local, "iifname " + vx + " " + ra, "oifname " + vx + " " + ra})
	writeBase(b, "overlay_input", "filter hook input priority -210; policy accept;",
		[]string{"iifname " + vx + " " + local, "iifname " + vx + " " + ra})
	writeBase(b, "overlay_output", "filter hook output priority -210; policy accept;",
		[]string{"oifname " + vx + " udp sport { 67, 547 } drop", "oifname " + vx + " " + ra})
}
