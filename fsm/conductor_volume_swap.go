package fsm

import (
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

// Swap volume (Nova's PUT os-volume_attachments/{old}) is a task of the
// instance's own agent like an attach: the op handler moves the old
// volume to detaching and the new one to attaching (with an attachment
// under the old one's device) in the entry that asks the agent for the
// copy, and the agent's report settles both: on success the new volume
// is in-use and the old available, on failure they return to where they
// were. The driver's swap is idempotent, so a restart mid-way repeats
// it.

// evSwapVolume is Nova's instance action event of a swap.
const evSwapVolume = "compute_swap_volume"

// swapVolumeFrom are the vm_states a volume may be swapped in: the
// guest runs (QEMU copies the disk), as Nova's check_instance_state for
// swap_volume, less RESIZED.
var swapVolumeFrom = []string{vmActive, vmPaused}

func init() {
	registerOp(structs.OpSwapVolume, func(t *taskTxn, inst *structs.Instance, e *structs.InstanceTaskEntry) error {
		return t.startSwapVolume(inst, e)
	})
}

// startSwapVolume checks the instance and both volumes with Nova's and
// Cinder's rules, then asks the instance's agent for the copy.
func (t *taskTxn) startSwapVolume(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	if err := checkState(inst, e.Op, swapVolumeFrom...); err != nil {
		return err
	}
	old, oldAtt, err := t.swapOld(inst, e)
	if err != nil {
		return err
	}
	nv, err := t.swapNew(inst, e, old)
	if err != nil {
		return err
	}
	a, err := t.needAlloc(inst, e.Op)
	if err != nil {
		return err
	}
	if nv.Host != a.HostID {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: volume %s is kept on another host than the instance: a swap moves only onto a volume of the instance's host", nv.ID)
	}
	if e.Volume.AttachmentID == "" {
		return structs.Errorf(structs.KindInvalid, "swap_volume needs an attachment id")
	}
	old.Status = structs.VolumeDetaching
	if err := t.putVolume(old); err != nil {
		return err
	}
	nv.Status = structs.VolumeAttaching
	nv.Attachments = append(nv.Attachments, &structs.VolumeAttachment{ID: e.Volume.AttachmentID, InstanceID: inst.ID,
		Host: a.HostID, Device: oldAtt.Device, Mode: "rw", Tag: oldAtt.Tag, DeleteOnTermination: oldAtt.DeleteOnTermination})
	if err := t.putVolume(nv); err != nil {
		return err
	}
	arg := structs.VolumeActionArg{VolumeID: nv.ID, AttachmentID: e.Volume.AttachmentID, Path: nv.ProviderLocation,
		Device: oldAtt.Device, FromVolumeID: old.ID}
	return t.startVolumeAction(inst, e, a, structs.ActionSwapVolume, arg, evSwapVolume)
}

// swapOld reads the volume a swap moves off: attached to the instance
// (404 as Nova's otherwise), in-use (Cinder's begin_detaching), and not
// its root volume.
func (t *taskTxn) swapOld(inst *structs.Instance, e *structs.InstanceTaskEntry) (*structs.Volume, *structs.VolumeAttachment, error) {
	old, err := t.volumeOf(inst, e)
	if err != nil {
		return nil, nil, err
	}
	att := old.AttachmentOf(inst.ID)
	if att == nil {
		return nil, nil, structs.Errorf(structs.KindNotFound, "The volume was either invalid or not attached to the instance.")
	}
	if isRootVolume(inst, old.ID) {
		return nil, nil, structs.Errorf(structs.KindInvalid, "Invalid volume: volume %s is the instance's root volume, which this cloud cannot swap", old.ID)
	}
	if old.Status != structs.VolumeInUse {
		return nil, nil, structs.Errorf(structs.KindInvalid, "Invalid volume: Unable to detach volume. Volume status must be 'in-use' and attach_status must be 'attached' to detach.")
	}
	return old, att, nil
}

// swapNew reads the volume a swap moves onto, with Nova's checks
// (detached, no smaller) and Cinder's reserve (available, with storage).
// A missing one is a 400 in Nova, not a 404.
func (t *taskTxn) swapNew(inst *structs.Instance, e *structs.InstanceTaskEntry, old *structs.Volume) (*structs.Volume, error) {
	id := e.Volume.NewVolumeID
	if id == "" {
		return nil, structs.Errorf(structs.KindInvalid, "swap_volume needs a new volume")
	}
	nv, err := first[*structs.Volume](t.txn, nil, TableVolumes, "id", id)
	if err != nil {
		return nil, err
	}
	if nv == nil || nv.ProjectID != inst.ProjectID {
		return nil, structs.Errorf(structs.KindInvalid, "Volume %s could not be found.", id)
	}
	nv = nv.Copy()
	switch {
	case len(nv.Attachments) > 0:
		return nil, structs.Errorf(structs.KindInvalid, "Invalid volume: New volume must be detached in order to swap.")
	case nv.SizeGB < old.SizeGB:
		return nil, structs.Errorf(structs.KindInvalid, "Invalid volume: New volume must be the same size or larger.")
	case nv.Status != structs.VolumeAvailable:
		return nil, structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s status must be available or downloading to reserve, but the current status is %s.", nv.ID, nv.Status)
	case nv.ProviderLocation == "":
		return nil, structs.Errorf(structs.KindInvalid, "Invalid volume: volume %s has no storage yet", nv.ID)
	}
	return nv, nil
}

// settleSwapTask records a swap's outcome on both volumes: done, the
// new one is attached (in-use) and the old one released; failed, the
// new one is released and the old one in-use again. A data volume the
// instance was created with is replaced by the new one in its block
// devices, so a later spawn attaches the new one.
func (t *taskTxn) settleSwapTask(inst *structs.Instance, errText string) error {
	task := inst.Task
	nv, err := first[*structs.Volume](t.txn, nil, TableVolumes, "id", task.VolumeID)
	if err != nil {
		return err
	}
	old, err := first[*structs.Volume](t.txn, nil, TableVolumes, "id", task.SwapFromVolumeID)
	if err != nil {
		return err
	}
	if errText == "" && nv != nil {
		if i := slices.IndexFunc(inst.BlockDevices, func(bd *structs.BlockDevice) bool { return bd.VolumeID == task.SwapFromVolumeID }); i >= 0 {
			bd := *inst.BlockDevices[i]
			bd.VolumeID, bd.Path = nv.ID, nv.ProviderLocation
			if att := nv.AttachmentOf(inst.ID); att != nil {
				bd.AttachmentID = att.ID
			}
			inst.BlockDevices = slices.Clone(inst.BlockDevices)
			inst.BlockDevices[i] = &bd
		}
	}
	if nv != nil {
		if err := t.settleVolume(nv.Copy(), inst.ID, structs.OpAttachVolume, errText); err != nil {
			return err
		}
	}
	if old != nil {
		return t.settleVolume(old.Copy(), inst.ID, structs.OpDetachVolume, errText)
	}
	return nil
}
