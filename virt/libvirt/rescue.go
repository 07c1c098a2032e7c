package libvirt

import (
	"fmt"
	"strings"

	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
)

// rescueTargetPrefixes are the device-name prefixes of each bus a
// stable rescue disk may sit on.
var rescueTargetPrefixes = map[string]string{
	"virtio": "vd", "scsi": "sd", "sata": "sd", "usb": "sd", "ide": "hd", "fdc": "fd",
}

// rescueLayout is the layout a rescue of this instance gets: none (the
// legacy layout) unless r is stable, else r's device and bus with
// Nova's libvirt defaults filled in — a disk on the instance's own disk
// bus, a CD-ROM on IDE (SATA on q35, which has no IDE), a floppy on the
// floppy controller.
func (m *instanceMeta) rescueLayout(r virt.RescueSpec) (virt.RescueSpec, error) {
	if !r.Stable() {
		return virt.RescueSpec{}, nil
	}
	q35 := strings.Contains(m.Machine, "q35")
	out := virt.RescueSpec{Device: r.Device, Bus: r.Bus}
	if out.Device == "" {
		out.Device = "disk"
	}
	if out.Bus == "" {
		switch out.Device {
		case "disk":
			out.Bus = m.DiskBus
			if out.Bus == "" {
				out.Bus = "virtio"
			}
		case "cdrom":
			out.Bus = "ide"
			if q35 {
				out.Bus = "sata"
			}
		case "floppy":
			out.Bus = "fdc"
		}
	}
	switch {
	case out.Device != "disk" && out.Device != "cdrom" && out.Device != "floppy":
		return out, fmt.Errorf("rescue device %q: want disk, cdrom or floppy", out.Device)
	case rescueTargetPrefixes[out.Bus] == "":
		return out, fmt.Errorf("rescue bus %q: want virtio, scsi, sata, usb, ide or fdc", out.Bus)
	case (out.Device == "floppy") != (out.Bus == "fdc"):
		return out, fmt.Errorf("rescue device %s on bus %s: a floppy is on the fdc bus and only a floppy is", out.Device, out.Bus)
	case out.Bus == "ide" && q35:
		return out, fmt.Errorf("rescue bus ide: machine type %s has no IDE controller", m.Machine)
	case out.Device == "cdrom" && out.Bus == "virtio":
		return out, fmt.Errorf("rescue device cdrom on bus virtio: QEMU has no virtio CD-ROM")
	}
	return out, nil
}

// stableRescueDisks adds the rescue disk to the instance's disks as its
// recorded device on its recorded bus, on the first free device name of
// that bus, and orders the boot: the rescue disk, then the root disk.
func (m *instanceMeta) stableRescueDisks(disks []libvirtxml.DomainDisk) ([]libvirtxml.DomainDisk, error) {
	rd := m.disk(diskRescue)
	if rd == nil {
		return nil, fmt.Errorf("instance %s is rescued without a rescue disk", m.ID)
	}
	used := map[string]bool{}
	for _, d := range disks {
		if d.Target != nil {
			used[d.Target.Dev] = true
		}
	}
	prefix := rescueTargetPrefixes[m.RescueBus]
	dev := ""
	for c := 'a'; c <= 'z'; c++ {
		if name := prefix + string(c); !used[name] {
			dev = name
			break
		}
	}
	if dev == "" {
		return nil, fmt.Errorf("no free device name on bus %s for the rescue disk", m.RescueBus)
	}
	rescue := libvirtxml.DomainDisk{
		Device: m.RescueDevice,
		Driver: &libvirtxml.DomainDiskDriver{Name: "qemu", Type: "qcow2"},
		Source: &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: rd.Path}},
		Target: &libvirtxml.DomainDiskTarget{Dev: dev, Bus: m.RescueBus},
		Boot:   &libvirtxml.DomainDeviceBoot{Order: 1},
		Serial: diskRescue,
	}
	if m.RescueDevice == "cdrom" || m.RescueDevice == "floppy" {
		rescue.ReadOnly = &libvirtxml.DomainDiskReadOnly{}
	}
	if m.RescueDevice == "floppy" {
		rescue.Serial = "" // QEMU's floppy has no serial property
	}
	out := make([]libvirtxml.DomainDisk, 0, len(disks)+1)
	for _, d := range disks {
		if d.Serial == diskRoot {
			d.Boot = &libvirtxml.DomainDeviceBoot{Order: 2}
		}
		out = append(out, d)
	}
	return append(out, rescue), nil
}
