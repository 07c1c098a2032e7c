package dataplane

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// maxIfName is the longest interface name the kernel takes (IFNAMSIZ-1).
const maxIfName = 15

// CheckPhysicalInterfaces checks a physical_network → interface map: a
// name for each network and interfaces the kernel could name (short
// enough to carry a VLAN suffix, .4094).
func CheckPhysicalInterfaces(m map[string]string) error {
	for physnet, iface := range m {
		if physnet == "" {
			return fmt.Errorf("a physical network without a name maps to %q", iface)
		}
		if err := checkIfName(iface); err != nil {
			return fmt.Errorf("physical network %s: %w", physnet, err)
		}
		if len(iface)+len(".4094") > maxIfName {
			return fmt.Errorf("physical network %s: interface name %q leaves no room for a VLAN sub-interface (at most %d characters)",
				physnet, iface, maxIfName-len(".4094"))
		}
	}
	return nil
}

// checkIfName checks an interface name as the kernel does.
func checkIfName(s string) error {
	if s == "" || len(s) > maxIfName || s == "." || s == ".." || strings.ContainsAny(s, "/: \t\n") {
		return fmt.Errorf("%q is not an interface name", s)
	}
	return nil
}

// checkOverlay checks the tunnel endpoint and the physical interfaces.
func (cfg *Config) checkOverlay() error {
	if cfg.TunnelIP != "" {
		if err := structs.ValidTunnelIP(cfg.TunnelIP); err != nil {
			return fmt.Errorf("dataplane: %w", err)
		}
	}
	if err := CheckPhysicalInterfaces(cfg.PhysicalInterfaces); err != nil {
		return fmt.Errorf("dataplane: %w", err)
	}
	return nil
}

// uplink is the device a provider network's bridge gets: the physical
// interface of a flat network, the VLAN sub-interface of a VLAN one
// (with its parent), "" for other networks or an unmapped physical
// network.
func (p *Plane) uplink(n *Network) (dev, parent string) {
	iface := p.cfg.PhysicalInterfaces[n.PhysicalNetwork]
	if iface == "" {
		return "", ""
	}
	switch n.Type {
	case structs.NetTypeFlat:
		return iface, ""
	case structs.NetTypeVLAN:
		if n.SegmentationID < 1 || n.SegmentationID > 4094 {
			return "", ""
		}
		return iface + "." + strconv.Itoa(n.SegmentationID), iface
	}
	return "", ""
}

// ensureUplinks attaches each provider network's uplink to its bridge,
// making the VLAN sub-interfaces (marked ours) it needs. A physical
// interface is enslaved, never created or removed.
func (p *Plane) ensureUplinks(ctx context.Context, d *Desired, links map[string]ipLink) error {
	var errs []string
	for i := range d.Networks {
		n := &d.Networks[i]
		dev, parent := p.uplink(n)
		if dev == "" {
			p.warnUnmapped(n)
			continue
		}
		if err := p.ensureUplink(ctx, n, dev, parent, links); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("dataplane: %s", strings.Join(errs, "; "))
	}
	return nil
}

// warnUnmapped logs, once per network and plane, a provider network
// whose physical network this host has no interface for: its bridge
// stays host-local.
func (p *Plane) warnUnmapped(n *Network) {
	if n.PhysicalNetwork == "" || (n.Type != structs.NetTypeFlat && n.Type != structs.NetTypeVLAN) || p.warned[n.ID] {
		return
	}
	if p.warned == nil {
		p.warned = map[string]bool{}
	}
	p.warned[n.ID] = true
	p.logger.Warn("provider network's physical network has no interface on this host; its bridge stays local",
		"network", n.ID, "physical_network", n.PhysicalNetwork)
}

// ensureUplink plugs one uplink into a network's bridge.
func (p *Plane) ensureUplink(ctx context.Context, n *Network, dev, parent string, links map[string]ipLink) error {
	br := BridgeName(n.ID)
	if parent != "" {
		if _, ok := links[parent]; !ok {
			return fmt.Errorf("network %s: physical interface %s does not exist", n.ID, parent)
		}
		if _, ok := links[dev]; !ok {
			if _, err := p.run.run(ctx, "ip", "link", "add", "link", parent, "name", dev, "type", "vlan",
				"id", strconv.Itoa(n.SegmentationID)); err != nil {
				return fmt.Errorf("network %s: create VLAN sub-interface: %w", n.ID, err)
			}
		}
		if _, err := p.run.run(ctx, "ip", "link", "set", "dev", dev, "alias", p.alias()); err != nil {
			return fmt.Errorf("network %s: mark %s: %w", n.ID, dev, err)
		}
	} else if _, ok := links[dev]; !ok {
		return fmt.Errorf("network %s: physical interface %s does not exist", n.ID, dev)
	}
	if l, ok := links[dev]; ok && l.Master == br && hasFlag(l.Flags, "UP") {
		return nil
	}
	if _, err := p.run.run(ctx, "ip", "link", "set", "dev", dev, "master", br, "up"); err != nil {
		return fmt.Errorf("network %s: plug %s into %s: %w", n.ID, dev, br, err)
	}
	return nil
}

// removeStaleVLANs deletes the VLAN sub-interfaces the plane made that
// no network needs any more.
func (p *Plane) removeStaleVLANs(ctx context.Context, d *Desired) error {
	links, err := p.links(ctx, "vlan")
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for i := range d.Networks {
		if dev, parent := p.uplink(&d.Networks[i]); parent != "" {
			want[dev] = true
		}
	}
	var errs []string
	for _, l := range links {
		if l.IfAlias != p.alias() || want[l.IfName] {
			continue
		}
		if _, err := p.run.run(ctx, "ip", "link", "del", "dev", l.IfName); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("dataplane: remove VLAN sub-interfaces: %s", strings.Join(errs, "; "))
	}
	return nil
}

func hasFlag(flags []string, f string) bool {
	for _, x := range flags {
		if x == f {
			return true
		}
	}
	return false
}

// validIP reports whether s parses as an address.
func validIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}
