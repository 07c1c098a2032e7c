package libvirt

import (
	"bytes"
	"fmt"
	"strings"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"
)

// createConfigDrive stores an instance's config drive image (an ISO 9660
// image, see virt/configdrive) as a raw volume of the pool, uploaded
// through libvirtd so that it works with a remote one too, and records
// it in m (which must have an attempt); the domain attaches it as a read-only CD-ROM. It is deleted
// with the instance's other volumes.
func (d *Driver) createConfigDrive(lv *golibvirt.Libvirt, p golibvirt.StoragePool, m *instanceMeta, img []byte, undo *reverter) error {
	name := d.diskVolume(m, diskConfig)
	if err := d.checkFree(lv, p, name); err != nil {
		return err
	}
	vol := &libvirtxml.StorageVolume{
		Name:     name,
		Capacity: &libvirtxml.StorageVolumeSize{Unit: "bytes", Value: uint64(len(img))},
		Target:   &libvirtxml.StorageVolumeTarget{Format: &libvirtxml.StorageVolumeTargetFormat{Type: "raw"}},
	}
	doc, err := vol.Marshal()
	if err != nil {
		return err
	}
	v, err := lv.StorageVolCreateXML(p, doc, 0)
	if err != nil {
		return fmt.Errorf("create config drive volume %s: %w", name, err)
	}
	undo.add("delete volume "+name, func() error { return d.deleteVolume(lv, p, name) })
	if err := lv.StorageVolUpload(v, bytes.NewReader(img), 0, uint64(len(img)), 0); err != nil {
		return fmt.Errorf("upload config drive %s: %w", name, err)
	}
	path, err := lv.StorageVolGetPath(v)
	if err != nil {
		return fmt.Errorf("volume %s: %w", name, err)
	}
	m.setDisk(metaDisk{Role: diskConfig, Volume: name, Path: path})
	return nil
}

// configDriveDisk is the config drive's CD-ROM: on IDE (hdd) for the pc
// machine, as Nova attaches it, and on SATA (sde) for q35 and other
// machines without IDE.
func configDriveDisk(path, machine, arch string) libvirtxml.DomainDisk {
	bus, dev := "ide", "hdd"
	x86 := arch == "" || arch == "x86_64" || arch == "i686"
	if !x86 || strings.Contains(machine, "q35") {
		bus, dev = "sata", "sde"
	}
	return libvirtxml.DomainDisk{
		Device:   "cdrom",
		Driver:   &libvirtxml.DomainDiskDriver{Name: "qemu", Type: "raw"},
		Source:   &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: path}},
		Target:   &libvirtxml.DomainDiskTarget{Dev: dev, Bus: bus},
		ReadOnly: &libvirtxml.DomainDiskReadOnly{},
		Serial:   diskConfig,
	}
}
