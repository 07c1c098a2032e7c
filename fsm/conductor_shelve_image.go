package fsm

import (
	"maps"

	"github.com/stratus-cloud/stratus/structs"
)

// A shelve keeps the instance's disk as an image (Nova's
// shelved_image_id): once the guest is off, its agent snapshots the root
// disk to the image the leader made for it, and only then is the
// instance shelved, and offloaded if asked. An unshelve onto any host
// builds the root disk from that image (Allocation.RestoreImageID); the
// destination's agent deletes the image once the instance runs, as
// Nova's compute does.

// System metadata a shelve records, as Nova does.
const (
	sysmetaShelvedImageID = "shelved_image_id"
	sysmetaShelvedHost    = "shelved_host"
)

// shelveSnapshot asks the stopped instance's agent for the snapshot.
func (t *taskTxn) shelveSnapshot(inst *structs.Instance, a *structs.Allocation) error {
	task := inst.Task.Copy()
	inst.Task = task
	task.Step = structs.StepAgent
	inst.TaskState = structs.TaskShelvingImagePendingUpload
	arg := structs.SnapshotArg{ImageID: task.SnapshotImageID}
	if _, err := t.command(a, func(c *structs.Allocation) {
		c.PendingAction, c.ActionSeq, c.ActionArg = structs.ActionSnapshot, t.index, arg.String()
	}); err != nil {
		return err
	}
	return t.putInstance(inst)
}

// shelveSnapshotDone records the snapshot and shelves the instance; a
// failed snapshot (whose image its agent deleted) ends the shelve with
// the instance stopped where it is.
func (t *taskTxn) shelveSnapshotDone(inst *structs.Instance, a *structs.Allocation, u *structs.AllocClientUpdate) error {
	if u.ActionError != "" {
		inst.VMState, inst.PowerState = vmStopped, u.PowerState
		return t.end(inst, "snapshot for shelve failed: "+u.ActionError)
	}
	sys := maps.Clone(inst.SystemMetadata)
	if sys == nil {
		sys = map[string]string{}
	}
	sys[sysmetaShelvedImageID] = inst.Task.SnapshotImageID
	sys[sysmetaShelvedHost] = a.HostID
	inst.SystemMetadata = sys
	return t.shelved(inst, a)
}

// restoreImage is the snapshot an offloaded instance's unshelve builds
// its root disk from, "" for none (shelved without a snapshot).
func restoreImage(inst *structs.Instance) string {
	return inst.SystemMetadata[sysmetaShelvedImageID]
}

// unshelved forgets the shelve's system metadata once the instance runs
// again.
func unshelved(inst *structs.Instance) {
	if inst.SystemMetadata[sysmetaShelvedImageID] == "" && inst.SystemMetadata[sysmetaShelvedHost] == "" {
		return
	}
	sys := maps.Clone(inst.SystemMetadata)
	delete(sys, sysmetaShelvedImageID)
	delete(sys, sysmetaShelvedHost)
	inst.SystemMetadata = sys
}
