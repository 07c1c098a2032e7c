package libvirt

import (
	"fmt"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// A block migration copies the instance's own disks and never its
// volumes: a volume served over the network (an NBD export, an RBD
// image) is opened as it is by the destination's QEMU, which libvirt
// starts from the same definition, and a volume's file is its storage
// host's, not the instance's. Libvirt's default copies every writable
// disk with a source, network disks included, so a domain with volumes
// names the disks to copy (VIR_MIGRATE_PARAM_MIGRATE_DISKS): its own
// writable ones.

// migrateDisksParams are the migrate_disks parameters of a block
// migration of dom (record m): none when it has no volumes (libvirt's
// default is then right), else one per disk of its own that libvirt
// copies.
func migrateDisksParams(lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta) ([]golibvirt.TypedParam, error) {
	if len(m.Volumes) == 0 && m.RootVolume == nil {
		return nil, nil
	}
	live, err := lv.DomainGetXMLDesc(dom, 0)
	if err != nil {
		return nil, fmt.Errorf("domain %s: %w", dom.Name, err)
	}
	targets, err := ownDiskTargets(live, m)
	if err != nil {
		return nil, err
	}
	params := make([]golibvirt.TypedParam, 0, len(targets))
	for _, dev := range targets {
		params = append(params, golibvirt.TypedParam{Field: golibvirt.MigrateParamMigrateDisks, Value: *golibvirt.NewTypedParamValueString(dev)})
	}
	return params, nil
}

// ownDiskTargets are the target devices of the writable disks of domain
// XML x whose files are the instance's own disks (m.Disks).
func ownDiskTargets(x string, m *instanceMeta) ([]string, error) {
	var dom libvirtxml.Domain
	if err := dom.Unmarshal(x); err != nil {
		return nil, fmt.Errorf("parse the domain's XML: %w", err)
	}
	own := map[string]bool{}
	for _, d := range m.Disks {
		own[d.Path] = true
	}
	var out []string
	if dom.Devices == nil {
		return nil, nil
	}
	for _, disk := range dom.Devices.Disks {
		if disk.ReadOnly != nil || disk.Target == nil || disk.Source == nil || disk.Source.File == nil {
			continue
		}
		if own[disk.Source.File.File] {
			out = append(out, disk.Target.Dev)
		}
	}
	return out, nil
}
