package libvirt

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
)

// ResizeVolume shows an attached volume's new size to the guest, as
// Nova's libvirt extend_volume: a running or paused domain's disk is
// grown with virDomainBlockResize, which for a file grows the file
// itself (QEMU holds it, so nothing else may) and for an RBD image
// makes QEMU read the size the storage host gave it. A domain that is
// not running has its file grown with qemu-img resize; its network
// disks are sized by QEMU when it starts. A disk of size bytes or more
// is left alone, so a repeated call is a no-op.
//
// A disk served over NBD cannot grow: QEMU's NBD client refuses
// ("Cannot grow NBD nodes"), and that error is returned.
func (d *Driver) ResizeVolume(ctx context.Context, id, volumeID string, size int64) error {
	if size <= 0 {
		return fmt.Errorf("libvirt ResizeVolume %q: size %d is not positive", id, size)
	}
	return d.withDomain(ctx, "ResizeVolume", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		mv, dev, err := resizeTarget(lv, dom, m, volumeID)
		if err != nil {
			return err
		}
		if s.active() {
			_, capacity, _, err := lv.DomainGetBlockInfo(dom, dev, 0)
			if err != nil {
				return fmt.Errorf("read the size of volume %s (%s): %w", volumeID, dev, err)
			}
			if int64(capacity) >= size {
				return nil
			}
			if err := lv.DomainBlockResize(dom, dev, uint64(size), golibvirt.DomainBlockResizeBytes); err != nil {
				return fmt.Errorf("block-resize volume %s (%s) to %d bytes: %w", volumeID, dev, size, err)
			}
			return nil
		}
		if mv.Path == "" {
			return nil
		}
		return growFile(ctx, mv.Path, mv.Format, size)
	})
}

// resizeTarget finds an instance's volume and its guest device: an
// attached volume's is in the instance's record; the root volume's (an
// instance booted from a volume) is found by its serial in the domain,
// as Nova matches a volume that has no device path.
func resizeTarget(lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, volumeID string) (metaVolume, string, error) {
	if i := slices.IndexFunc(m.Volumes, func(v metaVolume) bool { return v.ID == volumeID }); i >= 0 {
		return m.Volumes[i], m.Volumes[i].Device, nil
	}
	if m.RootVolume == nil || m.RootVolume.ID != volumeID {
		return metaVolume{}, "", fmt.Errorf("%w: %s", ErrVolumeNotAttached, volumeID)
	}
	doc, err := lv.DomainGetXMLDesc(dom, 0)
	if err != nil {
		return metaVolume{}, "", fmt.Errorf("read domain XML: %w", err)
	}
	var x libvirtxml.Domain
	if err := x.Unmarshal(doc); err != nil {
		return metaVolume{}, "", fmt.Errorf("domain XML: %w", err)
	}
	serial := volumeDisk(*m.RootVolume).Serial
	if x.Devices != nil {
		for _, d := range x.Devices.Disks {
			if d.Serial == serial && d.Target != nil {
				return *m.RootVolume, d.Target.Dev, nil
			}
		}
	}
	return metaVolume{}, "", fmt.Errorf("%w: root volume %s has no disk in the domain", ErrVolumeNotAttached, volumeID)
}

// growFile grows a disk file no process holds to size bytes, if it is
// smaller.
func growFile(ctx context.Context, path, format string, size int64) error {
	out, err := exec.CommandContext(ctx, "qemu-img", "info", "--output=json", "-f", format, path).Output()
	if err != nil {
		return fmt.Errorf("qemu-img info %s: %w", path, err)
	}
	var info struct {
		VirtualSize int64 `json:"virtual-size"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return fmt.Errorf("qemu-img info %s: %w", path, err)
	}
	if info.VirtualSize >= size {
		return nil
	}
	return qemuImg("resize", "-f", format, path, strconv.FormatInt(size, 10))
}

var _ virt.VolumeResizer = (*Driver)(nil)
