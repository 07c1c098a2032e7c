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
// Cinder's rules, in Nova's order, then asks the instance's agent for
// the copy onto wherever the new volume is: a file of the instance's
// host, the storage host's NBD export of the new attachment (served
// once the storage agent sees the attachment this entry records), or
// an RBD image.
func (t *taskTxn) startSwapVolume(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	if err := checkState(inst, e.Op, swapVolumeFrom...); err != nil {
		return err
	}
	old, err := t.volumeOf(inst, e)
	if err != nil {
		return err
	}
	oldAtt := old.AttachmentOf(inst.ID)
	if oldAtt == nil {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: Old volume is attached to a different instance.")
	}
	nv, err := t.swapNew(inst, e, old)
	if err != nil {
		return err
	}
	a, err := t.needAlloc(inst, e.Op)
	if err != nil {
		return err
	}
	if e.Volume.AttachmentID == "" {
		return structs.Errorf(structs.KindInvalid, "swap_volume needs an attachment id")
	}
	export, err := t.volumeExport(nv, a.HostID, e.Volume.AttachmentID)
	if err != nil {
		return err
	}
	// A root volume is booted from its file (BlockDevice.Path): the
	// instance's host must keep the new one as a file too.
	if isRootVolume(inst, old.ID) && (export != nil || nv.Backend == structs.VolumeBackendRBD) {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: volume %s is the instance's root volume, which can be swapped only onto a volume kept as a file on the instance's host", old.ID)
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
	switch {
	case nv.Backend == structs.VolumeBackendRBD:
		arg.Path, arg.RBD = "", nv.ProviderLocation
	case export != nil:
		arg.Path, arg.NBD = "", export
	}
	return t.startVolumeAction(inst, e, a, structs.ActionSwapVolume, arg, evSwapVolume)
}

// swapNew reads the volume a swap moves onto and checks both volumes as
// Nova's swap_volume does, in its order: the new volume detached and no
// smaller; the old one in-use (Cinder's begin_detaching) with at most
// one read/write attachment; the new one available (Cinder's reserve).
// A missing new volume is a 400 in Nova, not a 404.
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
	case old.Status != structs.VolumeInUse:
		return nil, structs.Errorf(structs.KindInvalid, "Invalid volume: Unable to detach volume. Volume status must be 'in-use' and attach_status must be 'attached' to detach.")
	case readWriteAttachments(old) > 1:
		return nil, structs.Errorf(structs.KindInvalid, "Swapping multi-attach volumes with more than one read/write attachment is not supported.")
	case nv.Status != structs.VolumeAvailable:
		return nil, structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s status must be available or downloading to reserve, but the current status is %s.", nv.ID, nv.Status)
	case nv.ProviderLocation == "":
		return nil, structs.Errorf(structs.KindInvalid, "Invalid volume: volume %s has no storage yet", nv.ID)
	}
	return nv, nil
}

// readWriteAttachments counts v's attachments as Nova's
// _count_attachments_for_swap: the read/write ones when there are
// several, else all.
func readWriteAttachments(v *structs.Volume) int {
	if len(v.Attachments) <= 1 {
		return len(v.Attachments)
	}
	n := 0
	for _, a := range v.Attachments {
		if a.Mode != "ro" {
			n++
		}
	}
	return n
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
		swapBlockDevice(inst, task, nv)
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

// swapBlockDevice replaces the volume a swap moved off in the block
// devices inst was created with, so that a later spawn attaches the new
// one. A data volume that is no file of the instance's host (another
// host's NBD export, an RBD image) leaves the list instead: a spawn
// opens only files, and the volume stays attached like one attached
// after the create. (A root volume moves only onto a file.)
func swapBlockDevice(inst *structs.Instance, task *structs.Task, nv *structs.Volume) {
	i := slices.IndexFunc(inst.BlockDevices, func(bd *structs.BlockDevice) bool { return bd.VolumeID == task.SwapFromVolumeID })
	if i < 0 {
		return
	}
	inst.BlockDevices = slices.Clone(inst.BlockDevices)
	bd := *inst.BlockDevices[i]
	if bd.BootIndex != 0 && (nv.Backend == structs.VolumeBackendRBD || nv.Host != task.SourceHostID) {
		inst.BlockDevices = slices.Delete(inst.BlockDevices, i, i+1)
		return
	}
	bd.VolumeID, bd.Path = nv.ID, nv.ProviderLocation
	if att := nv.AttachmentOf(inst.ID); att != nil {
		bd.AttachmentID = att.ID
	}
	inst.BlockDevices[i] = &bd
}
