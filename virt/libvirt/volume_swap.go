package libvirt

import (
	"context"
	"fmt"
	"slices"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
)

// swapPoll is how often SwapVolume looks at its block copy's progress.
const swapPoll = 50 * time.Millisecond

// SwapVolume moves the guest's disk of volume oldVolumeID onto vol while
// the guest runs, as Nova's libvirt driver does for swap volume: a block
// copy (virDomainBlockCopy) mirrors the old volume into vol's existing
// file or network disk (an NBD export or an RBD image, the destination
// given as a network disk), and once the mirror is in step the disk
// pivots to it. The old volume may be a data volume or the root volume
// the guest booted from. The guest keeps its device (and sees the same
// data); the record names vol under that device from then on, and the
// old volume is left alone. QEMU's mirror needs a destination of the
// source's exact size: a larger volume fails the copy, which leaves the
// guest on its old disk. Only a running or paused guest can swap: QEMU does the
// copy (virt.ErrInvalidState otherwise, as Nova's 409). Swapping to the
// volume already there is a no-op.
func (d *Driver) SwapVolume(ctx context.Context, id, oldVolumeID string, vol *virt.Volume) error {
	if vol == nil || vol.ID == "" {
		return fmt.Errorf("libvirt SwapVolume %q: the new volume needs an id", id)
	}
	return d.withDomain(ctx, "SwapVolume", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		slot, err := m.swapSlot(oldVolumeID, vol)
		if err != nil || slot == nil {
			return err
		}
		if !s.active() || s.managedSave || s.power == virt.PowerSuspend {
			return invalid("swap a volume of", s.power)
		}
		mv, err := newMetaVolume(vol, slot.old.Device)
		if err != nil {
			return err
		}
		if err := d.blockCopy(ctx, lv, dom, slot.dev, mv); err != nil {
			return fmt.Errorf("swap volume %s for %s: %w", slot.old.ID, vol.ID, err)
		}
		c := m.clone()
		if slot.root {
			c.RootVolume = &mv
		} else {
			c.Volumes = slices.Clone(m.Volumes)
			c.Volumes[slot.index] = mv
		}
		return d.redefine(lv, c)
	})
}

// swapSlot is where a swapped volume sits in an instance's record.
type swapSlot struct {
	old metaVolume
	// dev is the guest's target device the block copy names.
	dev string
	// root: the old volume is the root volume (RootVolume), else
	// Volumes[index].
	root  bool
	index int
}

// swapSlot finds the volume oldVolumeID that a swap to vol moves off:
// nil when vol has taken its place already (a repeated swap), an error
// when it is not attached or vol is attached already.
func (m *instanceMeta) swapSlot(oldVolumeID string, vol *virt.Volume) (*swapSlot, error) {
	if rv := m.RootVolume; rv != nil {
		switch rv.ID {
		case oldVolumeID:
			return &swapSlot{old: *rv, dev: m.rootTarget(), root: true}, nil
		case vol.ID:
			if rv.sameSource(vol) {
				return nil, nil
			}
			return nil, fmt.Errorf("volume %s is already attached to the instance", vol.ID)
		}
	}
	i := slices.IndexFunc(m.Volumes, func(v metaVolume) bool { return v.ID == oldVolumeID })
	j := slices.IndexFunc(m.Volumes, func(v metaVolume) bool { return v.ID == vol.ID })
	switch {
	case i < 0 && j >= 0 && m.Volumes[j].sameSource(vol):
		return nil, nil
	case i < 0:
		return nil, fmt.Errorf("%w: %s", ErrVolumeNotAttached, oldVolumeID)
	case j >= 0:
		return nil, fmt.Errorf("volume %s is already attached to the instance", vol.ID)
	}
	return &swapSlot{old: m.Volumes[i], dev: m.Volumes[i].Device, index: i}, nil
}

// rootTarget is the target device of the root disk: the first on its
// bus (a guest in rescue cannot swap).
func (m *instanceMeta) rootTarget() string {
	bus := m.DiskBus
	if bus == "" {
		bus = "virtio"
	}
	return diskTargets[bus][0]
}

// blockCopy mirrors the live disk dev into mv's storage, which exists
// already (the storage agent made it), and pivots the disk to it. A copy
// that fails or is cancelled is aborted, leaving the guest on its old
// disk.
func (d *Driver) blockCopy(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, dev string, mv metaVolume) error {
	dest := libvirtxml.DomainDisk{Device: "disk", Driver: &libvirtxml.DomainDiskDriver{Name: "qemu", Type: mv.Format}, Source: mv.source()}
	doc, err := dest.Marshal()
	if err != nil {
		return fmt.Errorf("encode the destination disk: %w", err)
	}
	// The domain is persistent: a transient job is what lets libvirt
	// copy one's disk; the record is redefined after the pivot.
	flags := golibvirt.DomainBlockCopyReuseExt | golibvirt.DomainBlockCopyTransientJob
	if err := lv.DomainBlockCopy(dom, dev, doc, nil, flags); err != nil {
		return fmt.Errorf("start the block copy of %s: %w", dev, err)
	}
	pivoted := false
	defer func() {
		if !pivoted {
			// Leave the guest on its old disk; the job may be gone
			// already.
			_ = lv.DomainBlockJobAbort(dom, dev, 0)
		}
	}()
	for {
		found, _, _, cur, end, err := lv.DomainGetBlockJobInfo(dom, dev, 0)
		if err != nil {
			return fmt.Errorf("read the block copy of %s: %w", dev, err)
		}
		if found == 0 {
			return fmt.Errorf("the block copy of %s ended before it was in step", dev)
		}
		if end > 0 && cur == end {
			err := lv.DomainBlockJobAbort(dom, dev, golibvirt.DomainBlockJobAbortPivot)
			if err == nil {
				pivoted = true
				return nil
			}
			// In step but not yet reported ready: look again.
			if !isLibvirtError(err, golibvirt.ErrBlockCopyActive) && !isLibvirtError(err, golibvirt.ErrOperationInvalid) {
				return fmt.Errorf("pivot %s to the new volume: %w", dev, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the block copy of %s: %w", dev, ctx.Err())
		case <-time.After(swapPoll):
		}
	}
}
