package fsm

import (
	"github.com/stratus-cloud/stratus/structs"
)

// Shelving and soft deletion: power off and keep the instance (shelved,
// soft-deleted), free its host (offloaded), and bring it back (unshelve
// schedules again when offloaded; restore starts it).

func init() {
	registerOp(structs.OpShelve, (*taskTxn).shelve)
	registerOp(structs.OpShelveOffload, (*taskTxn).shelveOffload)
	registerOp(structs.OpUnshelve, (*taskTxn).unshelve)
	registerOp(structs.OpSoftDelete, (*taskTxn).softDelete)
	registerOp(structs.OpRestore, (*taskTxn).restore)
}

func (t *taskTxn) shelve(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	if err := checkState(inst, e.Op, vmActive, vmStopped, vmPaused, vmSuspended); err != nil {
		return err
	}
	a, err := t.needAlloc(inst, e.Op)
	if err != nil {
		return err
	}
	if err := t.startEvent(inst, requestIDOf(e), evShelve, a.HostID); err != nil {
		return err
	}
	kind := structs.TaskKindShelve
	task := &structs.Task{Kind: kind, Step: structs.StepSourceStop, SourceHostID: a.HostID, SourceAllocID: a.ID, PowerOn: e.Offload,
		SnapshotImageID: e.ImageID}
	if err := t.begin(inst, e, task, structs.TaskShelving); err != nil {
		return err
	}
	if a.ClientState == structs.AllocClientStopped && a.DesiredState == structs.AllocDesiredStopped {
		return t.shelveStopped(inst, a)
	}
	return t.setDesired(a, structs.AllocDesiredStopped)
}

// shelveStopped takes a shelve on once the guest is off: it snapshots
// the disk to the shelve's image, if it has one (conductor_shelve_image.go),
// else the instance is shelved.
func (t *taskTxn) shelveStopped(inst *structs.Instance, a *structs.Allocation) error {
	if inst.Task.SnapshotImageID != "" {
		return t.shelveSnapshot(inst, a)
	}
	return t.shelved(inst, a)
}

// shelved records a shelved instance and, if asked, offloads it at once
// (Nova's shelved_offload_time = 0). Task.PowerOn carries "offload".
func (t *taskTxn) shelved(inst *structs.Instance, a *structs.Allocation) error {
	offload, requestID := inst.Task.PowerOn, inst.Task.RequestID
	inst.VMState, inst.ShelvedAt, inst.PowerState = structs.VMStateShelved, t.at, structs.PowerShutdown
	if err := t.end(inst, ""); err != nil {
		return err
	}
	if !offload {
		return nil
	}
	if err := t.startEvent(inst, requestID, evShelveOffload, a.HostID); err != nil {
		return err
	}
	return t.offload(inst, a, requestID)
}

func (t *taskTxn) shelveOffload(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	if err := checkState(inst, e.Op, structs.VMStateShelved); err != nil {
		return err
	}
	a, err := t.primaryAlloc(inst)
	if err != nil {
		return err
	}
	if err := t.startEvent(inst, requestIDOf(e), evShelveOffload, inst.HostID); err != nil {
		return err
	}
	return t.offload(inst, a, requestIDOf(e))
}

// offload frees the host of a shelved instance: its agent destroys the
// guest, or the allocation goes at once if the host is down.
func (t *taskTxn) offload(inst *structs.Instance, a *structs.Allocation, requestID string) error {
	task := &structs.Task{Kind: structs.TaskKindOffload, Step: structs.StepSourceDelete, Op: structs.OpShelveOffload,
		RequestID: requestID, PrevVMState: structs.VMStateShelved, StartedAt: t.at}
	if a != nil {
		task.SourceHostID, task.SourceAllocID = a.HostID, a.ID
	}
	inst.Task, inst.TaskState = task, structs.TaskShelvingOffloading
	if a != nil {
		up, err := t.hostUp(a.HostID)
		if err != nil {
			return err
		}
		if up {
			if err := t.setDesired(a, structs.AllocDesiredDeleted); err != nil {
				return err
			}
			return t.putInstance(inst)
		}
		if err := t.drop(a); err != nil {
			return err
		}
	}
	return t.offloaded(inst)
}

func (t *taskTxn) offloaded(inst *structs.Instance) error {
	inst.VMState, inst.HostID, inst.PowerState = structs.VMStateShelvedOffloaded, "", structs.PowerNoState
	return t.end(inst, "")
}

func (t *taskTxn) unshelve(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	if err := checkState(inst, e.Op, structs.VMStateShelved, structs.VMStateShelvedOffloaded); err != nil {
		return err
	}
	if inst.VMState == structs.VMStateShelved {
		a, err := t.needAlloc(inst, e.Op)
		if err != nil {
			return err
		}
		if err := t.startEvent(inst, requestIDOf(e), evUnshelveSpawn, a.HostID); err != nil {
			return err
		}
		task := &structs.Task{Kind: structs.TaskKindUnshelve, Step: structs.StepDestSpawn, SourceHostID: a.HostID,
			DestHostID: a.HostID, DestAllocID: a.ID, PowerOn: true}
		if err := t.begin(inst, e, task, structs.TaskUnshelving); err != nil {
			return err
		}
		return t.setDesired(a, structs.AllocDesiredRunning)
	}
	if e.Eval == nil {
		return structs.Errorf(structs.KindInvalid, "unshelve of offloaded instance %s needs an evaluation", inst.ID)
	}
	ev := e.Eval.Copy()
	ev.CreateIndex, ev.ModifyIndex = t.index, t.index
	if err := t.txn.Insert(TableEvals, ev); err != nil {
		return err
	}
	t.store.announceEvals(t.txn, ev)
	if err := t.startEvent(inst, requestIDOf(e), evUnshelve, ""); err != nil {
		return err
	}
	task := &structs.Task{Kind: structs.TaskKindUnshelve, Step: structs.StepSchedule, EvalID: ev.ID,
		TargetHostID: e.TargetHostID, NewFlavor: inst.Flavor, PowerOn: true}
	return t.begin(inst, e, task, structs.TaskUnshelving)
}

func (t *taskTxn) softDelete(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	if inst.VMState == structs.VMStateSoftDeleted {
		return structs.Errorf(structs.KindConflict, "Instance %s is already soft-deleted", inst.ID)
	}
	if inst.Task != nil || (inst.TaskState != "" && inst.TaskState != structs.TaskScheduling) {
		return structs.Errorf(structs.KindConflict, "Cannot 'delete' instance %s while it is in task_state %s", inst.ID, taskStateOf(inst))
	}
	inst.DeletedAt = t.at
	a, err := t.primaryAlloc(inst)
	if err != nil {
		return err
	}
	up := false
	if a != nil {
		if up, err = t.hostUp(a.HostID); err != nil {
			return err
		}
	}
	prev := inst.VMState
	inst.VMState = structs.VMStateSoftDeleted
	if !up || (a.ClientState == structs.AllocClientStopped && a.DesiredState == structs.AllocDesiredStopped) {
		// Nova's local soft delete records the termination time.
		inst.TerminatedAt = t.at
		return t.putInstance(inst)
	}
	if err := t.startEvent(inst, requestIDOf(e), evSoftDelete, a.HostID); err != nil {
		return err
	}
	task := &structs.Task{Kind: structs.TaskKindPower, Op: structs.OpSoftDelete, Step: structs.StepSourceStop,
		SourceHostID: a.HostID, SourceAllocID: a.ID, PrevVMState: prev}
	if err := t.begin(inst, e, task, structs.TaskSoftDeleting); err != nil {
		return err
	}
	return t.setDesired(a, structs.AllocDesiredStopped)
}

func (t *taskTxn) restore(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	if inst.VMState != structs.VMStateSoftDeleted {
		return structs.Errorf(structs.KindConflict, "Cannot 'restore' instance %s while it is in vm_state %s", inst.ID, inst.VMState)
	}
	if inst.Task != nil {
		return structs.Errorf(structs.KindConflict, "Cannot 'restore' instance %s while it is in task_state %s", inst.ID, taskStateOf(inst))
	}
	inst.DeletedAt = 0
	a, err := t.needAlloc(inst, e.Op)
	if err != nil {
		return err
	}
	if err := t.startEvent(inst, requestIDOf(e), evRestore, a.HostID); err != nil {
		return err
	}
	task := &structs.Task{Kind: structs.TaskKindPower, Op: structs.OpRestore, Step: structs.StepDestSpawn,
		SourceHostID: a.HostID, SourceAllocID: a.ID, DestAllocID: a.ID, PowerOn: true, PrevVMState: vmStopped}
	if err := t.begin(inst, e, task, structs.TaskRestoring); err != nil {
		return err
	}
	return t.setDesired(a, structs.AllocDesiredRunning)
}

// advanceShelve takes the next step of shelving, offloading, unshelving,
// soft-deleting or restoring on an allocation's report.
func (t *taskTxn) advanceShelve(inst *structs.Instance, a *structs.Allocation, u *structs.AllocClientUpdate) error {
	task := inst.Task.Copy()
	inst.Task = task
	switch {
	case task.Step == structs.StepSourceStop && a.ID == task.SourceAllocID && u.ClientState == structs.AllocClientStopped:
		inst.PowerState = u.PowerState
		if task.Op == structs.OpSoftDelete {
			return t.end(inst, "")
		}
		return t.shelveStopped(inst, a)
	case task.Step == structs.StepAgent && a.ID == task.SourceAllocID && a.ActionSeq > 0 && u.ActionDoneSeq >= a.ActionSeq:
		return t.shelveSnapshotDone(inst, a, u)
	case task.Step == structs.StepSourceDelete && a.ID == task.SourceAllocID && u.ClientState == structs.AllocClientDeleted:
		return t.offloaded(inst)
	case task.Step == structs.StepDestSpawn && a.ID == task.DestAllocID:
		switch u.ClientState {
		case structs.AllocClientRunning, structs.AllocClientStopped:
			if task.Kind == structs.TaskKindUnshelve && task.EvalID != "" {
				return t.finishMove(inst, a, u)
			}
			inst.PowerState, inst.VMState = u.PowerState, derivedVMState(vmActive, u)
			if task.Kind == structs.TaskKindUnshelve {
				unshelved(inst)
			}
			return t.end(inst, "")
		}
	}
	return nil
}
