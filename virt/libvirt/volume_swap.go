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
// file or network disk, and once the mirror is in step the disk pivots
// to it. The guest keeps its device (and sees the same data); the record
// names vol under that device from then on, and the old volume's file
// is left alone. Only a running or paused guest can swap: QEMU does the
// copy (virt.ErrInvalidState otherwise, as Nova's 409). Swapping to the
// volume already there is a no-op.
func (d *Driver) SwapVolume(ctx context.Context, id, oldVolumeID string, vol *virt.Volume) error {
	if vol == nil || vol.ID == "" {
		return fmt.Errorf("libvirt SwapVolume %q: the new volume needs an id", id)
	}
	return d.withDomain(ctx, "SwapVolume", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		if slices.ContainsFunc(m.Volumes, func(v metaVolume) bool { return v.ID == vol.ID && v.sameSource(vol) }) &&
			!slices.ContainsFunc(m.Volumes, func(v metaVolume) bool { return v.ID == oldVolumeID }) {
			return nil
		}
		i := slices.IndexFunc(m.Volumes, func(v metaVolume) bool { return v.ID == oldVolumeID })
		if i < 0 {
			return fmt.Errorf("%w: %s", ErrVolumeNotAttached, oldVolumeID)
		}
		if slices.ContainsFunc(m.Volumes, func(v metaVolume) bool { return v.ID == vol.ID }) {
			return fmt.Errorf("volume %s is already attached to the instance", vol.ID)
		}
		if !s.active() || s.managedSave || s.power == virt.PowerSuspend {
			return invalid("swap a volume of", s.power)
		}
		old := m.Volumes[i]
		mv, err := newMetaVolume(vol, old.Device)
		if err != nil {
			return err
		}
		if err := d.blockCopy(ctx, lv, dom, old.Device, mv); err != nil {
			return fmt.Errorf("swap volume %s for %s: %w", old.ID, vol.ID, err)
		}
		c := m.clone()
		c.Volumes = slices.Clone(m.Volumes)
		c.Volumes[i] = mv
		return d.redefine(lv, c)
	})
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
