package libvirt

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"

	golibvirt "github.com/digitalocean/go-libvirt"

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
		i := slices.IndexFunc(m.Volumes, func(v metaVolume) bool { return v.ID == volumeID })
		if i < 0 {
			return fmt.Errorf("%w: %s", ErrVolumeNotAttached, volumeID)
		}
		mv := m.Volumes[i]
		if s.active() {
			_, capacity, _, err := lv.DomainGetBlockInfo(dom, mv.Device, 0)
			if err != nil {
				return fmt.Errorf("read the size of volume %s (%s): %w", volumeID, mv.Device, err)
			}
			if int64(capacity) >= size {
				return nil
			}
			if err := lv.DomainBlockResize(dom, mv.Device, uint64(size), golibvirt.DomainBlockResizeBytes); err != nil {
				return fmt.Errorf("block-resize volume %s (%s) to %d bytes: %w", volumeID, mv.Device, size, err)
			}
			return nil
		}
		if mv.Path == "" {
			return nil
		}
		return growFile(ctx, mv.Path, mv.Format, size)
	})
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
