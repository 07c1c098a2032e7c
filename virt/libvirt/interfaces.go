package libvirt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
)

// metaNIC is one of an instance's network interfaces in its record: the
// port, its MAC and the Linux bridge of its network. The tap device is
// tap + the port id's first 11 characters, as Neutron's linuxbridge
// agent and the host's dataplane name it.
type metaNIC struct {
	PortID string `xml:"port,attr"`
	MAC    string `xml:"mac,attr"`
	Bridge string `xml:"bridge,attr"`
}

// nicsMeta records a spec's NICs; those without a bridge or MAC are
// left out (nothing could wire them).
func nicsMeta(nics []virt.NIC) []metaNIC {
	var out []metaNIC
	for _, n := range nics {
		if n.Bridge == "" || n.MAC == "" || n.PortID == "" {
			continue
		}
		out = append(out, metaNIC{PortID: n.PortID, MAC: strings.ToLower(n.MAC), Bridge: n.Bridge})
	}
	return out
}

// tapName is a port's tap device.
func tapName(portID string) string {
	n := "tap" + portID
	if len(n) > 14 {
		n = n[:14]
	}
	return n
}

// domainInterface is the libvirt interface of a NIC: a tap on the
// network's bridge with the port's MAC, virtio.
func domainInterface(n metaNIC) libvirtxml.DomainInterface {
	return libvirtxml.DomainInterface{
		MAC:    &libvirtxml.DomainInterfaceMAC{Address: n.MAC},
		Source: &libvirtxml.DomainInterfaceSource{Bridge: &libvirtxml.DomainInterfaceSourceBridge{Bridge: n.Bridge}},
		Target: &libvirtxml.DomainInterfaceTarget{Dev: tapName(n.PortID)},
		Model:  &libvirtxml.DomainInterfaceModel{Type: "virtio"},
	}
}

// interfaces are the domain's interfaces, in NIC order.
func (m *instanceMeta) interfaces() []libvirtxml.DomainInterface {
	var out []libvirtxml.DomainInterface
	for _, n := range m.NICs {
		out = append(out, domainInterface(n))
	}
	return out
}

// libvirtBridgeAlias marks the bridges the driver created itself (the
// host's dataplane replaces it with its own mark when it adopts one).
const libvirtBridgeAlias = "stratus-libvirt"

// bridgeMu serializes creating bridges and defining domains on them
// with releasing unused bridges, so a bridge is never removed between a
// spawn's ensureBridges and its define.
var bridgeMu sync.Mutex

// ensureBridges creates the bridges of the NICs that are missing
// (marked as the driver's) and brings them up, as os-vif's linuxbridge
// plug does, so a guest starts even before the host's dataplane wired
// its network. Bridges are in the host's network namespace, where
// libvirtd puts the taps. Callers hold bridgeMu.
func ensureBridges(ctx context.Context, nics []metaNIC) error {
	for _, n := range nics {
		if exec.CommandContext(ctx, "ip", "link", "show", "dev", n.Bridge).Run() != nil {
			if out, err := exec.CommandContext(ctx, "ip", "link", "add", n.Bridge, "type", "bridge").CombinedOutput(); err != nil &&
				!strings.Contains(string(out), "File exists") {
				return fmt.Errorf("create bridge %s: %w: %s", n.Bridge, err, strings.TrimSpace(string(out)))
			}
			if out, err := exec.CommandContext(ctx, "ip", "link", "set", "dev", n.Bridge, "alias", libvirtBridgeAlias).CombinedOutput(); err != nil {
				return fmt.Errorf("mark bridge %s: %w: %s", n.Bridge, err, strings.TrimSpace(string(out)))
			}
		}
		if out, err := exec.CommandContext(ctx, "ip", "link", "set", "dev", n.Bridge, "up").CombinedOutput(); err != nil {
			return fmt.Errorf("bring up bridge %s: %w: %s", n.Bridge, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// releaseBridges removes the bridges of nics that the driver created
// and nothing uses any more: no device on them and no domain defined
// on them (of any namespace; a stopped guest needs its bridge to
// start). Bridges the dataplane adopted are its to remove.
func releaseBridges(ctx context.Context, lv *golibvirt.Libvirt, nics []metaNIC) error {
	if len(nics) == 0 {
		return nil
	}
	bridgeMu.Lock()
	defer bridgeMu.Unlock()
	var candidates []string
	for _, n := range nics {
		out, err := exec.CommandContext(ctx, "ip", "-j", "link", "show", "dev", n.Bridge).Output()
		if err != nil {
			continue // gone already
		}
		var links []struct {
			IfAlias string `json:"ifalias"`
		}
		if json.Unmarshal(out, &links) != nil || len(links) != 1 || links[0].IfAlias != libvirtBridgeAlias {
			continue
		}
		out, err = exec.CommandContext(ctx, "ip", "-j", "link", "show", "master", n.Bridge).Output()
		var ports []json.RawMessage
		if err != nil || json.Unmarshal(out, &ports) != nil || len(ports) > 0 {
			continue // in use, or unsure
		}
		candidates = append(candidates, n.Bridge)
	}
	if len(candidates) == 0 {
		return nil
	}
	used, err := bridgesOfDomains(lv)
	if err != nil {
		return err
	}
	var errs []error
	for _, br := range candidates {
		if used[br] {
			continue
		}
		if out, err := exec.CommandContext(ctx, "ip", "link", "del", "dev", br).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("delete bridge %s: %w: %s", br, err, strings.TrimSpace(string(out))))
		}
	}
	return errors.Join(errs...)
}

// bridgesOfDomains lists the bridges every defined domain's interfaces
// are on.
func bridgesOfDomains(lv *golibvirt.Libvirt) (map[string]bool, error) {
	doms, _, err := lv.ConnectListAllDomains(1, 0)
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	used := map[string]bool{}
	for _, dom := range doms {
		doc, err := lv.DomainGetXMLDesc(dom, golibvirt.DomainXMLInactive)
		if err != nil {
			continue // gone meanwhile
		}
		var x libvirtxml.Domain
		if x.Unmarshal(doc) != nil || x.Devices == nil {
			continue
		}
		for _, iface := range x.Devices.Interfaces {
			if iface.Source != nil && iface.Source.Bridge != nil {
				used[iface.Source.Bridge.Bridge] = true
			}
		}
	}
	return used, nil
}

// AttachInterface hot-plugs a NIC into a running (or paused) guest and
// records it, so it stays across stops and redefinitions; on a stopped
// guest it is only recorded. Attaching a port it already has is a
// no-op.
func (d *Driver) AttachInterface(ctx context.Context, id string, nic *virt.NIC) error {
	nm := nicsMeta([]virt.NIC{*nic})
	if len(nm) == 0 {
		return fmt.Errorf("attach interface: NIC of port %q needs a port, MAC and bridge", nic.PortID)
	}
	return d.withDomain(ctx, "AttachInterface", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		if slices.ContainsFunc(m.NICs, func(n metaNIC) bool { return n.PortID == nic.PortID }) {
			return nil
		}
		bridgeMu.Lock()
		defer bridgeMu.Unlock()
		if err := ensureBridges(ctx, nm); err != nil {
			return err
		}
		if s.power == virt.PowerRunning || s.power == virt.PowerPaused {
			doc, err := interfaceXML(nm[0])
			if err != nil {
				return err
			}
			if err := lv.DomainAttachDeviceFlags(dom, doc, uint32(golibvirt.DomainDeviceModifyLive)); err != nil {
				return fmt.Errorf("hot-plug interface of port %s: %w", nic.PortID, err)
			}
		}
		c := *m
		c.NICs = append(slices.Clone(m.NICs), nm[0])
		return d.redefine(lv, &c)
	})
}

// DetachInterface unplugs a port's NIC from a running guest (the guest
// must cooperate, as with any PCI hot-unplug) and forgets it. Detaching
// a port it does not have is a no-op.
func (d *Driver) DetachInterface(ctx context.Context, id string, portID string) error {
	return d.withDomain(ctx, "DetachInterface", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		i := slices.IndexFunc(m.NICs, func(n metaNIC) bool { return n.PortID == portID })
		if i < 0 {
			return nil
		}
		if s.power == virt.PowerRunning || s.power == virt.PowerPaused {
			doc, err := interfaceXML(m.NICs[i])
			if err != nil {
				return err
			}
			err = lv.DomainDetachDeviceFlags(dom, doc, uint32(golibvirt.DomainDeviceModifyLive))
			if err != nil && !isLibvirtError(err, golibvirt.ErrOperationFailed) {
				return fmt.Errorf("unplug interface of port %s: %w", portID, err)
			}
		}
		gone := m.NICs[i]
		c := *m
		c.NICs = slices.Delete(slices.Clone(m.NICs), i, i+1)
		if err := d.redefine(lv, &c); err != nil {
			return err
		}
		if err := releaseBridges(ctx, lv, []metaNIC{gone}); err != nil {
			d.cfg.Logger.Warn("cannot remove an unused bridge", "error", err)
		}
		return nil
	})
}

// interfaceXML renders one interface for (de)attaching.
func interfaceXML(n metaNIC) (string, error) {
	iface := domainInterface(n)
	doc, err := iface.Marshal()
	if err != nil {
		return "", errors.Join(fmt.Errorf("encode interface of port %s", n.PortID), err)
	}
	return doc, nil
}

// liveNICs are the bridge interfaces of a running domain (none when it
// is not running or cannot be read).
func liveNICs(lv *golibvirt.Libvirt, dom golibvirt.Domain) []metaNIC {
	doc, err := lv.DomainGetXMLDesc(dom, 0)
	if err != nil {
		return nil
	}
	var x libvirtxml.Domain
	if x.Unmarshal(doc) != nil || x.Devices == nil {
		return nil
	}
	var out []metaNIC
	for _, iface := range x.Devices.Interfaces {
		if iface.Source != nil && iface.Source.Bridge != nil {
			out = append(out, metaNIC{Bridge: iface.Source.Bridge.Bridge})
		}
	}
	return out
}
