package fsm

import (
	"github.com/stratus-cloud/stratus/structs"
)

// Moves: resize, cold migrate, live migrate and evacuate. Each schedules
// a destination (the evaluation is in the starting entry), holds it while
// the source works, and switches the instance over; resize and cold
// migrate then wait in VERIFY_RESIZE with the source still allocated.

func init() {
	registerOp(structs.OpResize, func(t *taskTxn, inst *structs.Instance, e *structs.InstanceTaskEntry) error {
		return t.startMove(inst, e, structs.TaskKindResize, structs.TaskResizePrep, structs.MigrationTypeResize, vmActive, vmStopped)
	})
	registerOp(structs.OpMigrate, func(t *taskTxn, inst *structs.Instance, e *structs.InstanceTaskEntry) error {
		return t.startMove(inst, e, structs.TaskKindMigrate, structs.TaskResizePrep, structs.MigrationTypeMigration, vmActive, vmStopped)
	})
	registerOp(structs.OpLiveMigrate, func(t *taskTxn, inst *structs.Instance, e *structs.InstanceTaskEntry) error {
		return t.startMove(inst, e, structs.TaskKindLiveMigrate, structs.TaskMigrating, structs.MigrationTypeLive, vmActive, vmPaused)
	})
	registerOp(structs.OpEvacuate, func(t *taskTxn, inst *structs.Instance, e *structs.InstanceTaskEntry) error {
		return t.startMove(inst, e, structs.TaskKindEvacuate, structs.TaskRebuilding, structs.MigrationTypeEvacuation, vmActive, vmStopped, vmError)
	})
	registerOp(structs.OpConfirmResize, (*taskTxn).confirmResize)
	registerOp(structs.OpAutoConfirm, (*taskTxn).confirmResize)
	registerOp(structs.OpRevertResize, (*taskTxn).revertResize)
	registerOp(structs.OpAbortMigration, (*taskTxn).abortMove)
}

var moveEvents = map[string]string{
	structs.TaskKindResize: evMigrateServer, structs.TaskKindMigrate: evMigrateServer,
	structs.TaskKindLiveMigrate: evLiveMigrate, structs.TaskKindEvacuate: evEvacuate,
	structs.TaskKindUnshelve: evUnshelve,
}

func (t *taskTxn) startMove(inst *structs.Instance, e *structs.InstanceTaskEntry, kind, taskState, migType string, from ...string) error {
	if err := checkState(inst, e.Op, from...); err != nil {
		return err
	}
	if e.Eval == nil || e.Migration == nil {
		return structs.Errorf(structs.KindInvalid, "%s of instance %s needs an evaluation and a migration record", e.Op, inst.ID)
	}
	src, err := t.primaryAlloc(inst)
	if err != nil {
		return err
	}
	up, err := t.hostUp(inst.HostID)
	if err != nil {
		return err
	}
	switch {
	case kind == structs.TaskKindEvacuate && up:
		return structs.Errorf(structs.KindConflict, "Compute service of host %s is still in use: evacuate only instances of a host that is down", inst.HostID)
	case kind != structs.TaskKindEvacuate && (src == nil || !up):
		return structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s: its host is not up", e.Op, inst.ID)
	}
	if kind == structs.TaskKindLiveMigrate {
		h, err := t.host(inst.HostID)
		if err != nil {
			return err
		}
		if h != nil && !h.HasCapability(structs.HostCapabilityLiveMigrate) {
			return structs.Errorf(structs.KindConflict, "Cannot live-migrate instance %s: the %s driver of host %s does not support live migration", inst.ID, h.Driver, h.Name)
		}
	}
	newFlavor := inst.Flavor
	if kind == structs.TaskKindResize {
		if e.NewFlavor == nil {
			return structs.Errorf(structs.KindInvalid, "resize of instance %s needs a flavor", inst.ID)
		}
		if inst.Flavor != nil && e.NewFlavor.ID == inst.Flavor.ID {
			return structs.Errorf(structs.KindInvalid, "When resizing, instances must change flavor!")
		}
		if inst.Flavor != nil {
			if err := checkQuotaDelta(t.txn, inst.ProjectID, e.NewFlavor.VCPUs-inst.Flavor.VCPUs, e.NewFlavor.MemoryMB-inst.Flavor.MemoryMB); err != nil {
				return err
			}
		}
		newFlavor = e.NewFlavor
	}
	mig := e.Migration.Copy()
	mig.InstanceID, mig.Type, mig.Status = inst.ID, migType, structs.MigrationPreMigrating
	if kind == structs.TaskKindEvacuate || kind == structs.TaskKindLiveMigrate {
		mig.Status = structs.MigrationAccepted
	}
	mig.CreatedAt, mig.UpdatedAt = t.at, t.at
	migID, err := insertMigration(t.txn, t.index, mig)
	if err != nil {
		return err
	}
	ev := e.Eval.Copy()
	ev.CreateIndex, ev.ModifyIndex = t.index, t.index
	if err := t.txn.Insert(TableEvals, ev); err != nil {
		return err
	}
	t.store.announceEvals(t.txn, ev)
	task := &structs.Task{
		Kind: kind, Step: structs.StepSchedule, MigrationID: migID, EvalID: ev.ID,
		SourceHostID: inst.HostID, TargetHostID: e.TargetHostID, NewFlavor: newFlavor,
		PowerOn:       inst.VMState != vmStopped,
		AllowSameHost: e.AllowSameHost && kind == structs.TaskKindResize,
	}
	switch kind {
	case structs.TaskKindResize, structs.TaskKindMigrate, structs.TaskKindLiveMigrate:
		task.DiskToken = e.DiskToken
	case structs.TaskKindEvacuate:
		task.EvacuateDisk = e.EvacuateDisk
	}
	if src != nil {
		task.SourceAllocID = src.ID
		task.PowerOn = src.DesiredState != structs.AllocDesiredStopped && inst.VMState != vmStopped
	}
	if err := t.startEvent(inst, requestIDOf(e), moveEvents[kind], ""); err != nil {
		return err
	}
	return t.begin(inst, e, task, taskState)
}

// placeMove handles the plan that found a destination for a task's
// instance (placement non-nil) or found none (fault non-nil).
func (t *taskTxn) placeMove(inst *structs.Instance, p *structs.Allocation, fault *structs.Fault) error {
	task := inst.Task
	if fault != nil {
		if err := t.setMigration(task, structs.MigrationError, nil); err != nil {
			return err
		}
		inst.VMState = task.PrevVMState
		if task.Kind == structs.TaskKindUnshelve {
			inst.VMState = structs.VMStateShelvedOffloaded
		}
		return t.end(inst, noHostMessage(task, fault))
	}
	dest, err := t.host(p.HostID)
	if err != nil {
		return err
	}
	a := p.Copy()
	a.DesiredState = structs.AllocDesiredHeld
	if task.Kind == structs.TaskKindResize {
		a.Flavor = task.NewFlavor
	}
	task = task.Copy()
	inst.Task = task
	task.DestHostID, task.DestAllocID = a.HostID, a.ID
	if a.Volumes, err = t.moveVolumes(inst); err != nil { // conductor_volume_moves.go
		if structs.KindOf(err) != structs.KindInvalid {
			return err
		}
		return t.placeMove(inst, nil, &structs.Fault{Code: 409, Message: err.Error()})
	}
	if err := t.finishEvent(inst, task.RequestID, ""); err != nil {
		return err
	}
	destName := ""
	if dest != nil {
		destName = dest.Name
	}
	status := structs.MigrationMigrating
	if task.Kind == structs.TaskKindLiveMigrate {
		status = structs.MigrationRunning // Nova's name for a live migration under way
	}
	if err := t.setMigration(task, status, func(m *structs.Migration) {
		m.DestHostID, m.DestHost = a.HostID, destName
	}); err != nil {
		return err
	}
	src, err := t.alloc(task.SourceAllocID)
	if err != nil {
		return err
	}
	switch task.Kind {
	case structs.TaskKindResize, structs.TaskKindMigrate:
		return t.startColdMove(inst, a, src)
	case structs.TaskKindLiveMigrate:
		return t.startLiveMove(inst, a, src, dest)
	default: // evacuate and unshelve: nothing to wait for at the source
		return t.startRebuildMove(inst, a, src, dest)
	}
}

// startColdMove starts a resize's or cold migration's copy: the
// destination's allocation is held while the source stops (unless it
// is off already).
func (t *taskTxn) startColdMove(inst *structs.Instance, a, src *structs.Allocation) error {
	task := inst.Task
	src, err := t.shareDisks(task, a, src)
	if err != nil {
		return err
	}
	if err := insertAlloc(t.txn, t.index, a, t.hb); err != nil {
		return err
	}
	inst.TaskState = structs.TaskResizeMigrating
	if err := t.startEvent(inst, task.RequestID, evResizeInstance, task.SourceHostID); err != nil {
		return err
	}
	if src != nil && src.ClientState == structs.AllocClientStopped && src.DesiredState == structs.AllocDesiredStopped {
		return t.spawnDest(inst, a) // already off: nothing to wait for
	}
	task.Step = structs.StepSourceStop
	if src != nil {
		if err := t.setDesired(src, structs.AllocDesiredStopped); err != nil {
			return err
		}
	}
	return t.putInstance(inst)
}

// startLiveMove asks the source to send the running guest to dest,
// with the destination's allocation held and prepared.
func (t *taskTxn) startLiveMove(inst *structs.Instance, a, src *structs.Allocation, dest *structs.Host) error {
	task := inst.Task
	prepare := t.prepareDest(task, a, src, dest) // conductor_disks.go
	if err := insertAlloc(t.txn, t.index, a, t.hb); err != nil {
		return err
	}
	if err := t.volumesMoving(inst, a.HostID); err != nil {
		return err
	}
	task.Step = structs.StepSourceSend
	if err := t.startEvent(inst, task.RequestID, evLiveMigration, task.SourceHostID); err != nil {
		return err
	}
	if src == nil {
		return t.abortMove(inst, nil)
	}
	if _, err := t.command(src, func(c *structs.Allocation) {
		c.PendingAction, c.ActionSeq, c.ActionArg = structs.ActionLiveMigrate, t.index, migrationTarget(dest)
		c.PrepareDest = prepare
	}); err != nil {
		return err
	}
	return t.putInstance(inst)
}

// startRebuildMove starts an evacuation or unshelve: the source (if
// any) is dropped and the destination spawns at once.
func (t *taskTxn) startRebuildMove(inst *structs.Instance, a, src *structs.Allocation, dest *structs.Host) error {
	task := inst.Task
	a.DesiredState = desiredFor(task.PowerOn)
	if task.Kind == structs.TaskKindUnshelve {
		a.RestoreImageID = restoreImage(inst) // conductor_shelve_image.go
	} else {
		a.EvacuateDisk = task.EvacuateDisk
	}
	if err := insertAlloc(t.txn, t.index, a, t.hb); err != nil {
		return err
	}
	if err := t.drop(src); err != nil {
		return err
	}
	if err := t.volumesMoving(inst, a.HostID); err != nil {
		return err
	}
	inst.HostID, inst.AZ = a.HostID, hostAZOf(dest, inst.AZ)
	task.Step = structs.StepDestSpawn
	ev := evRebuild
	if task.Kind == structs.TaskKindUnshelve {
		ev, inst.TaskState = evUnshelveSpawn, structs.TaskSpawning
	}
	if err := t.startEvent(inst, task.RequestID, ev, a.HostID); err != nil {
		return err
	}
	return t.putInstance(inst)
}

// noHostMessage is the error a move's event records when no destination
// was found: Nova's conductor words a cold migration's and a resize's
// NoValidHost its own way, without the scheduler's reasons; other moves
// keep the scheduler's words.
func noHostMessage(task *structs.Task, fault *structs.Fault) string {
	switch task.Kind {
	case structs.TaskKindMigrate:
		return "No valid host was found. No valid host found for cold migrate"
	case structs.TaskKindResize:
		return "No valid host was found. No valid host found for resize"
	}
	return fault.Message
}

// migrationTarget is what a source's driver needs to reach the
// destination: its migration URI if the agent published one, else its
// name.
func migrationTarget(h *structs.Host) string {
	if h == nil {
		return ""
	}
	if uri := h.Attributes["migration_uri"]; uri != "" {
		return uri
	}
	return h.Name
}

func hostAZOf(h *structs.Host, fallback string) string {
	if h != nil && h.AZ != "" {
		return h.AZ
	}
	return fallback
}

func desiredFor(powerOn bool) string {
	if powerOn {
		return structs.AllocDesiredRunning
	}
	return structs.AllocDesiredStopped
}

// spawnDest releases the held destination to spawn the instance.
func (t *taskTxn) spawnDest(inst *structs.Instance, dest *structs.Allocation) error {
	task := inst.Task
	task.Step = structs.StepDestSpawn
	inst.TaskState = structs.TaskResizeFinish
	if dest.HostID != task.SourceHostID { // resized in place otherwise, the same guest
		if err := t.volumesMoving(inst, dest.HostID); err != nil { // conductor_volume_moves.go
			return err
		}
	}
	if err := t.setDesired(dest, desiredFor(task.PowerOn)); err != nil {
		return err
	}
	if err := t.setMigration(task, structs.MigrationPostMigrate, nil); err != nil {
		return err
	}
	if err := t.finishEvent(inst, task.RequestID, ""); err != nil {
		return err
	}
	if err := t.startEvent(inst, task.RequestID, evFinishResize, task.DestHostID); err != nil {
		return err
	}
	return t.putInstance(inst)
}

func (t *taskTxn) setMigration(task *structs.Task, status string, fn func(m *structs.Migration)) error {
	return setMigration(t.txn, t.index, task.MigrationID, status, t.at, fn)
}

// advanceMove takes a move's next step on an allocation's report.
func (t *taskTxn) advanceMove(inst *structs.Instance, a *structs.Allocation, u *structs.AllocClientUpdate) error {
	task := inst.Task.Copy()
	inst.Task = task
	switch {
	case task.Step == structs.StepSourceStop && a.ID == task.SourceAllocID && u.ClientState == structs.AllocClientStopped:
		dest, err := t.alloc(task.DestAllocID)
		if err != nil {
			return err
		}
		if dest == nil {
			return t.abortMove(inst, nil)
		}
		return t.spawnDest(inst, dest)
	case task.Step == structs.StepSourceSend && a.ID == task.SourceAllocID && a.ActionSeq > 0 && u.ActionDoneSeq >= a.ActionSeq:
		if u.ActionError != "" {
			return t.failMove(inst, u.ActionError)
		}
		dest, err := t.alloc(task.DestAllocID)
		if err != nil {
			return err
		}
		if dest == nil {
			return t.failMove(inst, "the destination's allocation is gone")
		}
		// The guest lives on the destination now: its agent attaches to
		// it; the source's record goes.
		if err := t.setDesired(dest, structs.AllocDesiredRunning); err != nil {
			return err
		}
		if err := t.drop(a); err != nil {
			return err
		}
		h, err := t.host(dest.HostID)
		if err != nil {
			return err
		}
		inst.HostID, inst.AZ = dest.HostID, hostAZOf(h, inst.AZ)
		task.Step = structs.StepDestSpawn
		if err := t.finishEvent(inst, task.RequestID, ""); err != nil {
			return err
		}
		if err := t.startEvent(inst, task.RequestID, evPostLive, dest.HostID); err != nil {
			return err
		}
		return t.putInstance(inst)
	case task.Step == structs.StepDestSpawn && a.ID == task.DestAllocID:
		switch u.ClientState {
		case structs.AllocClientRunning, structs.AllocClientStopped:
			return t.finishMove(inst, a, u)
		case structs.AllocClientSpawning:
			if task.Kind == structs.TaskKindEvacuate {
				inst.TaskState = structs.TaskRebuildSpawning
				return t.putInstance(inst)
			}
		}
	}
	return nil
}

// finishMove switches the instance to the destination that reported
// it up.
func (t *taskTxn) finishMove(inst *structs.Instance, a *structs.Allocation, u *structs.AllocClientUpdate) error {
	task := inst.Task
	h, err := t.host(a.HostID)
	if err != nil {
		return err
	}
	inst.HostID, inst.AZ, inst.PowerState = a.HostID, hostAZOf(h, inst.AZ), u.PowerState
	inst.VMState = derivedVMState(vmActive, u)
	status := structs.MigrationDone
	switch task.Kind {
	case structs.TaskKindResize, structs.TaskKindMigrate:
		inst.VMState = structs.VMStateResized
		inst.Resize = &structs.PendingResize{
			Kind: task.Kind, MigrationID: task.MigrationID, SourceHostID: task.SourceHostID,
			SourceAllocID: task.SourceAllocID, OldFlavor: inst.Flavor, PowerOn: task.PowerOn, FinishedAt: t.at,
		}
		if task.NewFlavor != nil {
			inst.Flavor, inst.FlavorID = task.NewFlavor, task.NewFlavor.ID
		}
		status = structs.MigrationFinished
	case structs.TaskKindLiveMigrate:
		status = structs.MigrationCompleted
	case structs.TaskKindEvacuate:
		inst.Fault = nil
	}
	if task.Kind != structs.TaskKindUnshelve {
		if err := t.setMigration(task, status, nil); err != nil {
			return err
		}
	} else {
		unshelved(inst)
	}
	return t.end(inst, "")
}

// failMove ends a move that could not complete, leaving the instance
// where it was: the destination is released, the source keeps (or
// resumes) running.
func (t *taskTxn) failMove(inst *structs.Instance, reason string) error {
	task := inst.Task
	dest, err := t.alloc(task.DestAllocID)
	if err != nil {
		return err
	}
	if err := t.release(dest); err != nil {
		return err
	}
	src, err := t.alloc(task.SourceAllocID)
	if err != nil {
		return err
	}
	status := structs.MigrationError
	if task.Kind == structs.TaskKindLiveMigrate {
		status = structs.MigrationFailed
	}
	if err := t.setMigration(task, status, nil); err != nil {
		return err
	}
	switch {
	case src != nil && (task.Kind == structs.TaskKindResize || task.Kind == structs.TaskKindMigrate):
		if err := t.setDesired(src, desiredFor(task.PowerOn)); err != nil {
			return err
		}
		inst.HostID, inst.VMState = task.SourceHostID, task.PrevVMState
	case src != nil:
		inst.HostID, inst.VMState = task.SourceHostID, task.PrevVMState
	case task.Kind == structs.TaskKindUnshelve:
		inst.HostID, inst.VMState, inst.PowerState = "", structs.VMStateShelvedOffloaded, structs.PowerNoState
	default:
		// Nothing is left anywhere (an evacuation or a live migration
		// that lost the guest): the truth is ERROR.
		inst.HostID, inst.VMState, inst.PowerState = "", vmError, structs.PowerNoState
		inst.Fault = &structs.Fault{Code: 500, Message: reason, CreatedAt: t.at}
	}
	return t.end(inst, reason)
}

// abortMove is the servers' own op: a move's destination died (or its
// allocation vanished), so the move fails.
func (t *taskTxn) abortMove(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	if inst.Task == nil {
		return structs.Errorf(structs.KindConflict, "instance %s has no task to abort", inst.ID)
	}
	inst.Task = inst.Task.Copy()
	reason := "the destination host failed"
	if e != nil && e.Reason != "" {
		reason = e.Reason
	}
	if inst.Task.Kind == structs.TaskKindLiveMigrate && inst.Task.Step == structs.StepDestSpawn {
		// The source gave the guest away: there is nothing to go back to.
		inst.Task.SourceAllocID = ""
	}
	return t.failMove(inst, reason)
}

// destFailed handles a move's destination reporting its spawn failed.
func (t *taskTxn) destFailed(inst *structs.Instance, a *structs.Allocation) error {
	inst.Task = inst.Task.Copy()
	reason := a.ClientDescription
	if reason == "" {
		reason = "spawn on the destination failed"
	}
	if inst.Task.Kind == structs.TaskKindLiveMigrate {
		inst.Task.SourceAllocID = ""
	}
	return t.failMove(inst, reason)
}

func (t *taskTxn) confirmResize(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	if inst.VMState != structs.VMStateResized || inst.Resize == nil {
		return structs.Errorf(structs.KindConflict, "Instance %s has no resize to confirm (vm_state %s)", inst.ID, inst.VMState)
	}
	if inst.Task != nil || inst.TaskState != "" {
		return structs.Errorf(structs.KindConflict, "Cannot 'confirmResize' instance %s while it is in task_state %s", inst.ID, taskStateOf(inst))
	}
	r := inst.Resize
	src, err := t.alloc(r.SourceAllocID)
	if err != nil {
		return err
	}
	if err := t.startEvent(inst, requestIDOf(e), evConfirmResize, r.SourceHostID); err != nil {
		return err
	}
	status := structs.MigrationConfirmed
	if src != nil {
		up, err := t.hostUp(src.HostID)
		if err != nil {
			return err
		}
		if up {
			// Confirmed once the source's agent reports its copy gone.
			status = structs.MigrationConfirming
		}
		if err := t.release(src); err != nil {
			return err
		}
	}
	if err := setMigration(t.txn, t.index, r.MigrationID, status, t.at, nil); err != nil {
		return err
	}
	inst.Resize = nil
	inst.VMState = vmActive
	if err := t.volumesConfirmed(inst); err != nil { // conductor_volume_moves.go
		return err
	}
	if a, err := t.primaryAlloc(inst); err != nil {
		return err
	} else if a != nil && a.ClientState == structs.AllocClientStopped {
		inst.VMState = vmStopped
	}
	if err := t.finishEvent(inst, requestIDOf(e), ""); err != nil {
		return err
	}
	return t.putInstance(inst)
}

func (t *taskTxn) revertResize(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	if inst.VMState != structs.VMStateResized || inst.Resize == nil {
		return structs.Errorf(structs.KindConflict, "Instance %s has no resize to revert (vm_state %s)", inst.ID, inst.VMState)
	}
	if inst.Task != nil || inst.TaskState != "" {
		return structs.Errorf(structs.KindConflict, "Cannot 'revertResize' instance %s while it is in task_state %s", inst.ID, taskStateOf(inst))
	}
	r := inst.Resize
	src, err := t.alloc(r.SourceAllocID)
	if err != nil {
		return err
	}
	if src == nil {
		return structs.Errorf(structs.KindConflict, "Cannot revert the resize of instance %s: its source allocation is gone", inst.ID)
	}
	if up, err := t.hostUp(src.HostID); err != nil {
		return err
	} else if !up {
		return structs.Errorf(structs.KindConflict, "Cannot revert the resize of instance %s: source host %s is down", inst.ID, src.HostID)
	}
	dest, err := t.primaryAlloc(inst)
	if err != nil {
		return err
	}
	if err := setMigration(t.txn, t.index, r.MigrationID, structs.MigrationReverting, t.at, nil); err != nil {
		return err
	}
	if err := t.volumesReverted(inst); err != nil { // conductor_volume_moves.go
		return err
	}
	task := &structs.Task{
		Kind: structs.TaskKindRevert, Step: structs.StepDestDelete, MigrationID: r.MigrationID,
		SourceHostID: src.HostID, SourceAllocID: src.ID, DestHostID: inst.HostID, PowerOn: r.PowerOn,
		NewFlavor: r.OldFlavor, PrevVMState: structs.VMStateResized,
	}
	if err := t.startEvent(inst, requestIDOf(e), evRevertResize, inst.HostID); err != nil {
		return err
	}
	if dest != nil {
		task.DestAllocID = dest.ID
		up, err := t.hostUp(dest.HostID)
		if err != nil {
			return err
		}
		if up {
			if err := t.setDesired(dest, structs.AllocDesiredDeleted); err != nil {
				return err
			}
			return t.begin(inst, e, task, structs.TaskResizeReverting)
		}
		if err := t.drop(dest); err != nil {
			return err
		}
	}
	if err := t.begin(inst, e, task, structs.TaskResizeReverting); err != nil {
		return err
	}
	return t.revertToSource(inst, src)
}

// revertToSource brings the source back once the destination is gone.
func (t *taskTxn) revertToSource(inst *structs.Instance, src *structs.Allocation) error {
	task := inst.Task
	task.Step = structs.StepSourceStart
	if err := t.finishEvent(inst, task.RequestID, ""); err != nil {
		return err
	}
	if err := t.startEvent(inst, task.RequestID, evFinishRevert, src.HostID); err != nil {
		return err
	}
	if src.ClientState == clientStateFor(desiredFor(task.PowerOn)) && src.DesiredState == desiredFor(task.PowerOn) {
		return t.finishRevert(inst, &structs.AllocClientUpdate{ClientState: src.ClientState, PowerState: src.PowerState})
	}
	if err := t.setDesired(src, desiredFor(task.PowerOn)); err != nil {
		return err
	}
	return t.putInstance(inst)
}

func (t *taskTxn) finishRevert(inst *structs.Instance, u *structs.AllocClientUpdate) error {
	task := inst.Task
	inst.HostID, inst.PowerState = task.SourceHostID, u.PowerState
	if h, err := t.host(task.SourceHostID); err != nil {
		return err
	} else if h != nil && h.AZ != "" {
		inst.AZ = h.AZ
	}
	if task.NewFlavor != nil {
		inst.Flavor, inst.FlavorID = task.NewFlavor, task.NewFlavor.ID
	}
	inst.Resize = nil
	inst.VMState = derivedVMState(vmActive, u)
	if err := t.setMigration(task, structs.MigrationReverted, nil); err != nil {
		return err
	}
	return t.end(inst, "")
}

// advanceRevert takes a revert's next step.
func (t *taskTxn) advanceRevert(inst *structs.Instance, a *structs.Allocation, u *structs.AllocClientUpdate) error {
	task := inst.Task.Copy()
	inst.Task = task
	switch {
	case task.Step == structs.StepDestDelete && a.ID == task.DestAllocID && u.ClientState == structs.AllocClientDeleted:
		src, err := t.alloc(task.SourceAllocID)
		if err != nil {
			return err
		}
		if src == nil {
			inst.VMState, inst.HostID = vmError, ""
			inst.Fault = &structs.Fault{Code: 500, Message: "the source allocation vanished during the revert", CreatedAt: t.at}
			return t.end(inst, inst.Fault.Message)
		}
		return t.revertToSource(inst, src)
	case task.Step == structs.StepSourceStart && a.ID == task.SourceAllocID && u.ClientState == clientStateFor(desiredFor(task.PowerOn)):
		return t.finishRevert(inst, u)
	}
	return nil
}
