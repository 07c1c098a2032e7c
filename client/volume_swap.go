package client

import (
	"errors"
	"fmt"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// swapVolume carries out a swap_volume action: the driver copies the
// disk of the attached volume arg.FromVolumeID onto the new volume while
// the guest runs, and switches the guest to it. The new volume is a
// file on this host, its storage host's NBD export of the new
// attachment (tried again, as an attach is, while the storage agent
// sets the export up), or an RBD image reached with this host's Ceph
// settings. The driver's swap is idempotent (a swap already done is a
// no-op), so an agent that restarts mid-action reports the same
// outcome.
func (r *runner) swapVolume() error {
	ctx, d, id := r.c.ctx, r.c.driver, r.alloc.InstanceID
	arg, err := structs.ParseVolumeActionArg(r.alloc.ActionArg)
	if err != nil {
		return err
	}
	if arg.FromVolumeID == "" {
		return errors.New("the swap names no volume to move off")
	}
	vs, err := optional[virt.VolumeSwapper](d, d.Capabilities().AttachVolume, "swap_volume")
	if err != nil {
		return err
	}
	vol := &virt.Volume{ID: arg.VolumeID, Path: arg.Path, Device: arg.Device}
	switch {
	case arg.NBD != nil:
		vol.Path, vol.Network = "", nbdDisk(arg.NBD)
	case arg.RBD != "":
		if vol.Network, err = r.rbdDisk(arg); err != nil {
			return err
		}
	case arg.Path == "":
		return errors.New("the new volume has no file on this host")
	}
	if arg.NBD == nil {
		return vs.SwapVolume(ctx, id, arg.FromVolumeID, vol)
	}
	return r.retryExport(arg, func() error { return vs.SwapVolume(ctx, id, arg.FromVolumeID, vol) })
}

// retryExport runs use, which opens arg's NBD export, until it succeeds
// or exportWait passes: the storage agent starts serving the export
// when it sees the attachment, which the servers record in the same
// entry that asks this agent to act, so the two race. The pause grows
// from 250 ms to 5 s.
func (r *runner) retryExport(arg structs.VolumeActionArg, use func() error) error {
	ctx := r.c.ctx
	deadline := time.Now().Add(exportWait)
	pause := 250 * time.Millisecond
	for {
		err := use()
		if err == nil {
			return nil
		}
		if time.Now().Add(pause).After(deadline) {
			return fmt.Errorf("export %s of %s: %w", arg.NBD.Name, arg.NBD.Address, err)
		}
		r.logger.Info("volume export not ready; trying again", "volume_id", arg.VolumeID, "export", arg.NBD.Name, "error", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}
