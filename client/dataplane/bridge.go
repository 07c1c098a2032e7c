package dataplane

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ipLink is the part of `ip -j link show` the plane reads.
type ipLink struct {
	IfName  string `json:"ifname"`
	IfAlias string `json:"ifalias"`
	Master  string `json:"master"`
	MTU     int    `json:"mtu"`
	Address string `json:"address"`
	Flags   []string
}

// ipAddr is the part of `ip -j addr show` the plane reads.
type ipAddr struct {
	IfName   string `json:"ifname"`
	AddrInfo []struct {
		Family    string `json:"family"`
		Local     string `json:"local"`
		PrefixLen int    `json:"prefixlen"`
		Scope     string `json:"scope"`
	} `json:"addr_info"`
}

// alias marks the bridges this plane owns.
func (p *Plane) alias() string { return "stratus-dataplane:" + p.cfg.Owner }

// links lists the links of a type ("" for all).
func (p *Plane) links(ctx context.Context, kind string) ([]ipLink, error) {
	args := []string{"-j", "link", "show"}
	if kind != "" {
		args = append(args, "type", kind)
	}
	out, err := p.run.run(ctx, "ip", args...)
	if err != nil {
		return nil, err
	}
	var links []ipLink
	if err := json.Unmarshal([]byte(out), &links); err != nil {
		return nil, fmt.Errorf("read ip link output: %w", err)
	}
	return links, nil
}

// ownedBridges lists the bridges this plane made.
func (p *Plane) ownedBridges(ctx context.Context) (map[string]bool, error) {
	links, err := p.links(ctx, "bridge")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, l := range links {
		if l.IfAlias == p.alias() {
			out[l.IfName] = true
		}
	}
	return out, nil
}

// ensureBridge creates a network's bridge when missing, marks it ours,
// sets its MTU and addresses (its subnets' gateways and the network's
// extra addresses; others it holds are removed) and brings it up.
func (p *Plane) ensureBridge(ctx context.Context, n *Network, existing map[string]ipLink) error {
	br := BridgeName(n.ID)
	if _, ok := existing[br]; !ok {
		if _, err := p.run.run(ctx, "ip", "link", "add", br, "type", "bridge"); err != nil {
			return fmt.Errorf("create bridge of network %s: %w", n.ID, err)
		}
	}
	if existing[br].IfAlias != p.alias() {
		// Loose reverse-path filtering on the bridge: tenants with the
		// same CIDR on one host are told apart by policy routing, which
		// the kernel's reverse lookup does not see, so a strict host
		// (rp_filter=1) would drop one of them. Set once, when the
		// bridge becomes the plane's.
		if _, err := p.run.run(ctx, "sysctl", "-q", "-w", "net.ipv4.conf."+br+".rp_filter=2"); err != nil {
			return fmt.Errorf("bridge %s: %w", br, err)
		}
	}
	args := []string{"link", "set", "dev", br, "alias", p.alias()}
	if n.MTU > 0 {
		args = append(args, "mtu", strconv.Itoa(n.MTU))
	}
	// A tenant bridge's MAC is the one other hosts route to when this
	// host holds a router's SNAT (routing_plan.go).
	if mac := BridgeMAC(n.ID, p.cfg.Owner); !n.External && !strings.EqualFold(existing[br].Address, mac) {
		args = append(args, "address", mac)
		// A bridge made by an older agent changes its MAC: its guests
		// hear of it from a gratuitous ARP (which never crosses the
		// overlay: the VXLAN device answers or drops all ARP).
		if _, ok := existing[br]; ok {
			if _, err := p.run.run(ctx, "sysctl", "-q", "-w", "net.ipv4.conf."+br+".arp_notify=1"); err != nil {
				return fmt.Errorf("bridge %s: %w", br, err)
			}
		}
	}
	if _, err := p.run.run(ctx, "ip", append(args, "up")...); err != nil {
		return fmt.Errorf("set up bridge %s: %w", br, err)
	}
	return p.ensureAddresses(ctx, br, bridgeAddresses(n))
}

// bridgeAddresses are the addresses a network's bridge holds: each
// subnet's gateway with the subnet's prefix length (not an external
// network's: the upstream router holds it), and the extras.
func bridgeAddresses(n *Network) []string {
	var out []string
	for _, s := range n.Subnets {
		if s.GatewayIP == "" || n.External {
			continue
		}
		pfx, err := netip.ParsePrefix(s.CIDR)
		if err != nil {
			continue
		}
		out = append(out, fmt.Sprintf("%s/%d", s.GatewayIP, pfx.Bits()))
	}
	for _, a := range n.Addresses {
		if pfx, err := netip.ParsePrefix(a); err == nil {
			out = append(out, pfx.String())
		}
	}
	return sortedUnique(out)
}

// ensureAddresses makes dev's global addresses exactly want.
func (p *Plane) ensureAddresses(ctx context.Context, dev string, want []string) error {
	out, err := p.run.run(ctx, "ip", "-j", "addr", "show", "dev", dev)
	if err != nil {
		return err
	}
	var addrs []ipAddr
	if err := json.Unmarshal([]byte(out), &addrs); err != nil {
		return fmt.Errorf("read ip addr output: %w", err)
	}
	have := map[string]bool{}
	for _, a := range addrs {
		for _, ai := range a.AddrInfo {
			if ai.Scope == "link" || ai.Scope == "host" {
				continue
			}
			have[fmt.Sprintf("%s/%d", ai.Local, ai.PrefixLen)] = true
		}
	}
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w] = true
		if have[w] {
			continue
		}
		args := []string{"addr", "add", w, "dev", dev}
		if pfx, _ := netip.ParsePrefix(w); pfx.Addr().Is6() {
			args = append(args, "nodad")
		}
		if _, err := p.run.run(ctx, "ip", args...); err != nil {
			return fmt.Errorf("address bridge %s: %w", dev, err)
		}
	}
	for h := range have {
		if !wanted[h] {
			if _, err := p.run.run(ctx, "ip", "addr", "del", h, "dev", dev); err != nil {
				return fmt.Errorf("remove address from bridge %s: %w", dev, err)
			}
		}
	}
	return nil
}

// plugTaps puts every port's tap that exists on its network's bridge
// and up (a recreated bridge loses its ports; libvirt plugs a guest's
// tap itself when the guest starts).
func (p *Plane) plugTaps(ctx context.Context, d *Desired, links map[string]ipLink) error {
	for _, port := range d.Ports {
		tap := TapName(port.ID)
		l, ok := links[tap]
		if !ok {
			continue
		}
		br := BridgeName(port.NetworkID)
		if l.Master == br {
			continue
		}
		if _, err := p.run.run(ctx, "ip", "link", "set", "dev", tap, "master", br, "up"); err != nil {
			return fmt.Errorf("plug port %s into %s: %w", port.ID, br, err)
		}
	}
	return nil
}

// deleteBridge removes a bridge of ours.
func (p *Plane) deleteBridge(ctx context.Context, br string) error {
	if _, err := p.run.run(ctx, "ip", "link", "del", "dev", br); err != nil {
		return fmt.Errorf("delete bridge %s: %w", br, err)
	}
	return nil
}
