package libvirt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
)

// Errors of AttachVolume and DetachVolume, besides virt.ErrNotFound for
// an unknown instance; test them with errors.Is.
var (
	// ErrVolumeNotAttached means the instance has no volume of that id.
	// It is virt.ErrVolumeNotAttached, which callers outside virt/ test.
	ErrVolumeNotAttached = virt.ErrVolumeNotAttached
	// ErrDeviceInUse means the requested device name is taken by
	// another of the instance's disks.
	ErrDeviceInUse = errors.New("libvirt: the device name is in use by another disk of the instance")
)

// metaVolume is an attached volume in the instance's record: what it is
// (the caller's id), its file, the guest device it is and the file's
// format.
type metaVolume struct {
	ID     string `xml:"id,attr"`
	Path   string `xml:"path,attr"`
	Device string `xml:"device,attr"`
	Format string `xml:"format,attr"`
	// Network is set for a volume served over the network (Path empty).
	Network *metaNetwork `xml:"network,omitempty"`
}

// volumeBus is the bus volumes are attached on: SCSI, on a virtio-scsi
// controller. Unlike a virtio-blk PCI device, a SCSI disk leaves at once
// when it is unplugged, without the guest's consent, so detaching never
// hangs on a guest that ignores ACPI.
const volumeBus = "scsi"

// volumeController is the domain's virtio-scsi controller that volumes
// sit on.
var volumeController = libvirtxml.DomainController{Type: "scsi", Model: "virtio-scsi"}

// volumeDisk is the libvirt disk of an attached volume. Its serial is
// the volume id (QEMU keeps the first 20 characters), as Nova's.
func volumeDisk(v metaVolume) libvirtxml.DomainDisk {
	serial := v.ID
	if len(serial) > 20 {
		serial = serial[:20]
	}
	return libvirtxml.DomainDisk{
		Device: "disk",
		Driver: &libvirtxml.DomainDiskDriver{Name: "qemu", Type: v.Format},
		Source: v.source(),
		Target: &libvirtxml.DomainDiskTarget{Dev: v.Device, Bus: volumeBus},
		Serial: serial,
	}
}

// volumeDisks are the disks of the instance's attached volumes, for its
// domain definition.
func (m *instanceMeta) volumeDisks() []libvirtxml.DomainDisk {
	var out []libvirtxml.DomainDisk
	for _, v := range m.Volumes {
		out = append(out, volumeDisk(v))
	}
	return out
}

// volumeControllers are the controllers the instance's volumes need.
func (m *instanceMeta) volumeControllers() []libvirtxml.DomainController {
	if len(m.Volumes) == 0 && (m.Rescue == nil || m.RescueBus != "scsi") {
		return nil
	}
	return []libvirtxml.DomainController{volumeController}
}

// deviceRE matches the device names AttachVolume accepts.
var deviceRE = regexp.MustCompile(`^(vd|sd|hd|xvd)[a-z]{1,2}$`)

// volumeDevice checks a requested device name ("/dev/sdb", "sdb", or
// "" for any) and returns it without /dev/.
func volumeDevice(dev string) (string, error) {
	dev = strings.TrimPrefix(dev, "/dev/")
	if dev != "" && !deviceRE.MatchString(dev) {
		return "", fmt.Errorf("invalid device name %q: want /dev/sdX, /dev/vdX or none", dev)
	}
	return dev, nil
}

// fileFormat is the format of a volume's file: qcow2 by its magic, raw
// otherwise. A missing file is an error that says so.
func fileFormat(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return "", fmt.Errorf("%s is a directory", path)
	}
	hdr := make([]byte, len(qcow2Magic))
	if _, err := io.ReadFull(f, hdr); err == nil && bytes.Equal(hdr, qcow2Magic) {
		return "qcow2", nil
	}
	return "raw", nil
}

// usedTargets are the device names of every disk the domain has (live
// and persistent) or its record holds.
func usedTargets(lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta) (map[string]bool, error) {
	used := map[string]bool{}
	for _, flags := range []golibvirt.DomainXMLFlags{0, golibvirt.DomainXMLInactive} {
		doc, err := lv.DomainGetXMLDesc(dom, flags)
		if err != nil {
			return nil, fmt.Errorf("read domain XML: %w", err)
		}
		var x libvirtxml.Domain
		if err := x.Unmarshal(doc); err != nil {
			return nil, fmt.Errorf("domain XML: %w", err)
		}
		if x.Devices != nil {
			for _, d := range x.Devices.Disks {
				if d.Target != nil {
					used[d.Target.Dev] = true
				}
			}
		}
	}
	for _, v := range m.Volumes {
		used[v.Device] = true
	}
	return used, nil
}

// freeSCSIName is the first sdX (then sdXY) name not in used.
func freeSCSIName(used map[string]bool) string {
	for i := 0; ; i++ {
		name := "sd" + diskSuffix(i)
		if !used[name] {
			return name
		}
	}
}

// diskSuffix is the letters of the i-th disk: a … z, aa … zz.
func diskSuffix(i int) string {
	if i < 26 {
		return string(rune('a' + i))
	}
	return diskSuffix(i/26-1) + string(rune('a'+i%26))
}

// AttachVolume attaches the block device vol (a file: qcow2 or raw,
// found by its header) to an instance as a SCSI disk on a virtio-scsi
// controller: hot-plugged into a RUNNING or PAUSED guest, and recorded
// in its definition and metadata either way, so it stays across stops,
// redefinitions and restarts of the agent. vol.Device is a hint: an
// sdX name that is free is used as is, a name another disk has fails
// with ErrDeviceInUse, and otherwise (empty, or a vdX/hdX name) the
// first free sdX is taken. Attaching a volume id already attached with
// the same file is a no-op; a missing file fails. SUSPENDED instances
// refuse (virt.ErrInvalidState), as Nova's do.
func (d *Driver) AttachVolume(ctx context.Context, id string, vol *virt.Volume) error {
	if vol == nil || vol.ID == "" || (vol.Path == "") == (vol.Network == nil) {
		return fmt.Errorf("libvirt AttachVolume %q: a volume needs an id and either a path or a network source", id)
	}
	return d.withDomain(ctx, "AttachVolume", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		dev, err := volumeDevice(vol.Device)
		if err != nil {
			return fmt.Errorf("volume %s: %w", vol.ID, err)
		}
		if i := slices.IndexFunc(m.Volumes, func(v metaVolume) bool { return v.ID == vol.ID }); i >= 0 {
			if old := m.Volumes[i]; old.sameSource(vol) && (dev == "" || dev == old.Device) {
				return nil
			}
			return fmt.Errorf("volume %s is already attached as %s (%s)", vol.ID, m.Volumes[i].Device, m.Volumes[i].Path)
		}
		if s.managedSave || s.power == virt.PowerSuspend {
			return invalid("attach a volume to", s.power)
		}
		if _, err := newMetaVolume(vol, dev); err != nil {
			return err
		}
		used, err := usedTargets(lv, dom, m)
		if err != nil {
			return err
		}
		switch {
		case dev != "" && used[dev]:
			return fmt.Errorf("%w: volume %s wants %s", ErrDeviceInUse, vol.ID, dev)
		case !strings.HasPrefix(dev, "sd"):
			dev = freeSCSIName(used)
		}
		mv, err := newMetaVolume(vol, dev)
		if err != nil {
			return err
		}
		if s.active() {
			if err := d.hotplugVolume(lv, dom, mv); err != nil {
				return err
			}
		}
		c := m.clone()
		c.Volumes = append(slices.Clone(m.Volumes), mv)
		return d.redefine(lv, c)
	})
}

// hotplugVolume plugs a volume into a running domain, with a virtio-scsi
// controller first if it has none.
func (d *Driver) hotplugVolume(lv *golibvirt.Libvirt, dom golibvirt.Domain, mv metaVolume) error {
	doc, err := lv.DomainGetXMLDesc(dom, 0)
	if err != nil {
		return fmt.Errorf("read domain XML: %w", err)
	}
	var x libvirtxml.Domain
	if err := x.Unmarshal(doc); err != nil {
		return fmt.Errorf("domain XML: %w", err)
	}
	if x.Devices == nil || !slices.ContainsFunc(x.Devices.Controllers, func(c libvirtxml.DomainController) bool {
		return c.Type == "scsi" && c.Model == volumeController.Model
	}) {
		cdoc, err := volumeController.Marshal()
		if err != nil {
			return fmt.Errorf("encode SCSI controller: %w", err)
		}
		if err := lv.DomainAttachDeviceFlags(dom, cdoc, uint32(golibvirt.DomainDeviceModifyLive)); err != nil {
			return fmt.Errorf("hot-plug a virtio-scsi controller: %w", err)
		}
	}
	disk := volumeDisk(mv)
	ddoc, err := disk.Marshal()
	if err != nil {
		return fmt.Errorf("encode disk of volume %s: %w", mv.ID, err)
	}
	if err := lv.DomainAttachDeviceFlags(dom, ddoc, uint32(golibvirt.DomainDeviceModifyLive)); err != nil {
		return fmt.Errorf("hot-plug volume %s as %s: %w", mv.ID, mv.Device, err)
	}
	return nil
}

// DetachVolume detaches the volume of that id (unplugged from a running
// or paused guest at once, SCSI needing no guest cooperation) and
// forgets it; the file itself is left alone. A volume the instance does
// not have fails with ErrVolumeNotAttached.
func (d *Driver) DetachVolume(ctx context.Context, id string, volumeID string) error {
	return d.withDomain(ctx, "DetachVolume", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		i := slices.IndexFunc(m.Volumes, func(v metaVolume) bool { return v.ID == volumeID })
		if i < 0 {
			return fmt.Errorf("%w: %s", ErrVolumeNotAttached, volumeID)
		}
		if s.active() {
			disk := volumeDisk(m.Volumes[i])
			doc, err := disk.Marshal()
			if err != nil {
				return fmt.Errorf("encode disk of volume %s: %w", volumeID, err)
			}
			err = lv.DomainDetachDeviceFlags(dom, doc, uint32(golibvirt.DomainDeviceModifyLive))
			// A disk missing from the live domain is detached already.
			if err != nil && !isLibvirtError(err, golibvirt.ErrDeviceMissing) && !isLibvirtError(err, golibvirt.ErrOperationFailed) {
				return fmt.Errorf("unplug volume %s: %w", volumeID, err)
			}
		}
		c := m.clone()
		c.Volumes = slices.Delete(slices.Clone(m.Volumes), i, i+1)
		return d.redefine(lv, c)
	})
}
