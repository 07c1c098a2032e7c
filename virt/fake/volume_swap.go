package fake

import (
	"context"
	"fmt"
	"slices"

	"github.com/stratus-cloud/stratus/virt"
)

// SwapVolume can be failed with FailNext and FailAlways.
func init() { ops["SwapVolume"] = true }

// SwapVolume puts vol in the place of the attached volume oldVolumeID,
// under the same device, as the libvirt driver's block copy does; only
// a running or paused instance swaps (virt.ErrInvalidState otherwise),
// one without oldVolumeID fails with virt.ErrVolumeNotAttached, and a
// swap already done is a no-op. The root volume swaps too (the
// instance's spec then boots from vol). The fake copies no data.
func (d *Driver) SwapVolume(ctx context.Context, id, oldVolumeID string, vol *virt.Volume) error {
	if vol == nil || vol.ID == "" || (vol.Path == "") == (vol.Network == nil) {
		return fmt.Errorf("fake SwapVolume %q: a volume needs an id and either a path or a network source", id)
	}
	return d.transition(ctx, "SwapVolume", id, func(in *instance) error {
		if rv := in.spec.RootVolume; rv != nil && (rv.ID == oldVolumeID || rv.ID == vol.ID) {
			return swapRoot(in, oldVolumeID, vol)
		}
		has := func(vid string) int {
			return slices.IndexFunc(in.volumes, func(v virt.Volume) bool { return v.ID == vid })
		}
		if has(vol.ID) >= 0 && has(oldVolumeID) < 0 {
			return nil
		}
		i := has(oldVolumeID)
		if i < 0 {
			return fmt.Errorf("%w: %s", virt.ErrVolumeNotAttached, oldVolumeID)
		}
		if has(vol.ID) >= 0 {
			return fmt.Errorf("volume %s is already attached to the instance", vol.ID)
		}
		if in.power != virt.PowerRunning && in.power != virt.PowerPaused {
			return virt.InvalidState("swap a volume of", in.power)
		}
		nv := *vol
		nv.Device = in.volumes[i].Device
		in.volumes[i] = nv
		return nil
	})
}

// swapRoot swaps the root volume of in for vol, as SwapVolume does a
// data volume's.
func swapRoot(in *instance, oldVolumeID string, vol *virt.Volume) error {
	if in.spec.RootVolume.ID == vol.ID {
		return nil
	}
	if in.power != virt.PowerRunning && in.power != virt.PowerPaused {
		return virt.InvalidState("swap a volume of", in.power)
	}
	nv := *vol
	nv.Device = in.spec.RootVolume.Device
	in.spec.RootVolume = &nv
	return nil
}
