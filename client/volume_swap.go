package client

import (
	"errors"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// swapVolume carries out a swap_volume action: the driver copies the
// disk of the attached volume arg.FromVolumeID onto the new volume's
// file on this host while the guest runs, and switches the guest to it.
// The driver's swap is idempotent (a swap already done is a no-op), so
// an agent that restarts mid-action reports the same outcome.
func (r *runner) swapVolume() error {
	ctx, d, id := r.c.ctx, r.c.driver, r.alloc.InstanceID
	arg, err := structs.ParseVolumeActionArg(r.alloc.ActionArg)
	if err != nil {
		return err
	}
	if arg.FromVolumeID == "" {
		return errors.New("the swap names no volume to move off")
	}
	if arg.Path == "" {
		return errors.New("the new volume has no file on this host")
	}
	vs, err := optional[virt.VolumeSwapper](d, d.Capabilities().AttachVolume, "swap_volume")
	if err != nil {
		return err
	}
	return vs.SwapVolume(ctx, id, arg.FromVolumeID, &virt.Volume{ID: arg.VolumeID, Path: arg.Path, Device: arg.Device})
}
