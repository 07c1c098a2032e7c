package libvirt

import (
	"fmt"
	"strings"

	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
)

// An instance that boots from a volume has the volume's file as its
// root disk: the first disk on its bus (vda on virtio), recorded in its
// metadata apart from the disks it owns, so Destroy leaves the file
// alone and a redefinition finds it again. Data volumes the spawn names
// are recorded as AttachVolume records them.

// bootVolumes records spec's root and data volumes in m, checking that
// their files exist.
func bootVolumes(m *instanceMeta, spec *virt.InstanceSpec) error {
	if rv := spec.RootVolume; rv != nil {
		mv, err := newMetaVolume(rv, "")
		if err != nil {
			return fmt.Errorf("root volume: %w", err)
		}
		m.RootVolume = &mv
	}
	// sda may be the root disk (hw_disk_bus sata).
	used := map[string]bool{"sda": true}
	for _, v := range spec.Volumes {
		dev, err := volumeDevice(v.Device)
		if err != nil {
			return fmt.Errorf("volume %s: %w", v.ID, err)
		}
		if !strings.HasPrefix(dev, "sd") || used[dev] {
			dev = freeSCSIName(used)
		}
		mv, err := newMetaVolume(&v, dev)
		if err != nil {
			return err
		}
		used[dev] = true
		m.Volumes = append(m.Volumes, mv)
	}
	return nil
}

// rootVolumeDisk is the root disk of an instance booted from a volume:
// the volume's file as the target dev on bus, its serial the volume id
// (as an attached volume's).
func rootVolumeDisk(v metaVolume, dev, bus string) libvirtxml.DomainDisk {
	disk := volumeDisk(v)
	disk.Target = &libvirtxml.DomainDiskTarget{Dev: dev, Bus: bus}
	return disk
}
