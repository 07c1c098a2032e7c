package fsm

import (
	"github.com/stratus-cloud/stratus/structs"
)

// Snapshot events, as Nova's instance actions name them.
const (
	evSnapshot = "compute_snapshot_instance"
	evBackup   = "compute_backup_instance"
)

// snapshotFrom are the vm_states a snapshot may start from (Nova's
// check_instance_state for snapshot and backup).
var snapshotFrom = []string{vmActive, vmStopped, vmPaused, vmSuspended}

func init() {
	// The instance's own agent copies and uploads the disk: a one-off
	// action finished by its report, as a power operation is. The
	// vm_state stays what the agent reports.
	powerOps[structs.OpCreateImage] = powerOp{from: snapshotFrom, task: structs.TaskImageSnapshot,
		action: structs.ActionSnapshot, event: evSnapshot, capability: structs.HostCapabilitySnapshot}
	powerOps[structs.OpCreateBackup] = powerOp{from: snapshotFrom, task: structs.TaskImageBackup,
		action: structs.ActionSnapshot, event: evBackup, capability: structs.HostCapabilitySnapshot}
	registerApply(structs.SnapshotProgressType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.SnapshotProgressEntry
		if err := decodeBody(structs.SnapshotProgressType, body, &e); err != nil {
			return err
		}
		return s.SnapshotProgress(index, &e)
	})
	for _, name := range []string{structs.OpCreateImage, structs.OpCreateBackup} {
		op := powerOps[name]
		registerOp(name, func(t *taskTxn, inst *structs.Instance, e *structs.InstanceTaskEntry) error {
			return t.startSnapshot(inst, e, op)
		})
	}
}

// startSnapshot starts a snapshot: the power operation's checks and
// step, with the image (and a backup's rotation) as the action's
// argument.
func (t *taskTxn) startSnapshot(inst *structs.Instance, e *structs.InstanceTaskEntry, op powerOp) error {
	if e.ImageID == "" {
		return structs.Errorf(structs.KindInvalid, "a snapshot needs the image that receives it")
	}
	if err := t.startPower(inst, e, op); err != nil {
		return err
	}
	a, err := t.alloc(inst.Task.SourceAllocID)
	if err != nil {
		return err
	}
	arg := structs.SnapshotArg{ImageID: e.ImageID, Backup: e.Op == structs.OpCreateBackup, Rotation: e.Rotation}
	_, err = t.command(a, func(c *structs.Allocation) { c.ActionArg = arg.String() })
	return err
}

// SnapshotProgress moves a snapshot's task_state to the step an agent
// reported (image_pending_upload, image_uploading). A report that is not
// of the instance's current snapshot — another task, another allocation
// or action, a step already passed — changes nothing.
func (s *StateStore) SnapshotProgress(index uint64, e *structs.SnapshotProgressEntry) error {
	rank := map[string]int{structs.TaskImagePendingUpload: 1, structs.TaskImageUploading: 2,
		structs.TaskShelvingImagePendingUpload: 1, structs.TaskShelvingImageUploading: 2}
	if rank[e.TaskState] == 0 {
		return structs.Errorf(structs.KindInvalid, "%q is not a step of a snapshot", e.TaskState)
	}
	txn := s.writeTxn()
	defer txn.Abort()
	inst, err := first[*structs.Instance](txn, nil, TableInstances, "id", e.InstanceID)
	if err != nil || inst == nil {
		return err
	}
	task := inst.Task
	step := e.TaskState
	if task != nil && task.Kind == structs.TaskKindShelve && task.Step == structs.StepAgent {
		// A shelve's snapshot, under Nova's shelving_* names.
		step = map[string]string{structs.TaskImagePendingUpload: structs.TaskShelvingImagePendingUpload,
			structs.TaskImageUploading: structs.TaskShelvingImageUploading}[e.TaskState]
	} else if task == nil || (task.Op != structs.OpCreateImage && task.Op != structs.OpCreateBackup) {
		return nil
	}
	if step == "" || task.SourceAllocID != e.AllocID || rank[inst.TaskState] >= rank[step] {
		return nil
	}
	a, err := first[*structs.Allocation](txn, nil, TableAllocations, "id", e.AllocID)
	if err != nil || a == nil || a.ActionSeq != e.ActionSeq || a.PendingAction != structs.ActionSnapshot {
		return err
	}
	if err := updateInstance(txn, index, inst.ID, func(i *structs.Instance) { i.TaskState = step }); err != nil {
		return err
	}
	return commitAt(txn, index, TableInstances)
}
