package fsm

import (
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// powerOp is an operation carried out by the instance's own agent on
// its own host: a desired power state, a one-off action, or both.
type powerOp struct {
	from []string // vm_states it may start from (Nova's check_instance_state)
	task string   // task_state while it runs
	// desired is the allocation's new desired state ("" leaves it).
	desired string
	// action is the agent's one-off action ("" for none).
	action string
	event  string
	// capability the host's driver must have ("" for none).
	capability string
	// after is the vm_state on success; "" derives it from the power
	// state the agent reports.
	after string
}

const (
	vmActive    = structs.VMStateActive
	vmStopped   = structs.VMStateStopped
	vmPaused    = structs.VMStatePaused
	vmSuspended = structs.VMStateSuspended
	vmError     = structs.VMStateError
	vmRescued   = structs.VMStateRescued
)

var powerOps = map[string]powerOp{
	structs.OpStart: {from: []string{vmStopped}, task: structs.TaskPoweringOn,
		desired: structs.AllocDesiredRunning, event: evStart, after: vmActive},
	structs.OpStop: {from: []string{vmActive, vmError, vmRescued}, task: structs.TaskPoweringOff,
		desired: structs.AllocDesiredStopped, event: evStop, after: vmStopped},
	structs.OpRebootSoft: {from: []string{vmActive}, task: structs.TaskRebooting,
		desired: structs.AllocDesiredRunning, action: structs.ActionRebootSoft, event: evReboot},
	structs.OpRebootHard: {from: []string{vmActive, vmStopped, vmPaused, vmSuspended, vmError}, task: structs.TaskRebootHard,
		desired: structs.AllocDesiredRunning, action: structs.ActionRebootHard, event: evReboot},
	structs.OpPause: {from: []string{vmActive}, task: structs.TaskPausing,
		action: structs.ActionPause, event: evPause, capability: structs.HostCapabilityPause, after: vmPaused},
	structs.OpUnpause: {from: []string{vmPaused}, task: structs.TaskUnpausing,
		action: structs.ActionUnpause, event: evUnpause, capability: structs.HostCapabilityPause, after: vmActive},
	structs.OpSuspend: {from: []string{vmActive}, task: structs.TaskSuspending,
		action: structs.ActionSuspend, event: evSuspend, capability: structs.HostCapabilitySuspend, after: vmSuspended},
	structs.OpResume: {from: []string{vmSuspended}, task: structs.TaskResuming,
		action: structs.ActionResume, event: evResume, capability: structs.HostCapabilitySuspend, after: vmActive},
	structs.OpRescue: {from: []string{vmActive, vmStopped, vmError}, task: structs.TaskRescuing,
		desired: structs.AllocDesiredRunning, action: structs.ActionRescue, event: evRescue,
		capability: structs.HostCapabilityRescue, after: vmRescued},
	structs.OpUnrescue: {from: []string{vmRescued}, task: structs.TaskUnrescuing,
		action: structs.ActionUnrescue, event: evUnrescue, capability: structs.HostCapabilityRescue, after: vmActive},
	structs.OpRebuild: {from: []string{vmActive, vmStopped, vmError}, task: structs.TaskRebuilding,
		action: structs.ActionRebuild, event: evRebuild},
}

func init() {
	for name, op := range powerOps {
		registerOp(name, func(t *taskTxn, inst *structs.Instance, e *structs.InstanceTaskEntry) error {
			return t.startPower(inst, e, op)
		})
	}
	registerOp(structs.OpLock, func(t *taskTxn, inst *structs.Instance, e *structs.InstanceTaskEntry) error {
		inst.Locked, inst.LockedBy, inst.LockedReason = true, e.LockedBy, e.Reason
		return t.putInstance(inst)
	})
	registerOp(structs.OpUnlock, func(t *taskTxn, inst *structs.Instance, e *structs.InstanceTaskEntry) error {
		inst.Locked, inst.LockedBy, inst.LockedReason = false, "", ""
		return t.putInstance(inst)
	})
}

func (t *taskTxn) startPower(inst *structs.Instance, e *structs.InstanceTaskEntry, op powerOp) error {
	if err := checkState(inst, e.Op, op.from...); err != nil {
		return err
	}
	a, err := t.needAlloc(inst, e.Op)
	if err != nil {
		return err
	}
	if op.capability != "" {
		h, err := t.host(a.HostID)
		if err != nil {
			return err
		}
		if h != nil && !h.HasCapability(op.capability) {
			return structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s: the %s driver of host %s does not support it", e.Op, inst.ID, h.Driver, h.Name)
		}
	}
	if _, err := t.command(a, func(c *structs.Allocation) {
		if op.desired != "" {
			c.DesiredState = op.desired
		}
		if op.action != "" {
			c.PendingAction, c.ActionSeq, c.ActionArg = op.action, t.index, ""
			if e.Op == structs.OpRescue {
				c.ActionArg = e.ImageID
			}
			if e.Op == structs.OpRebuild && e.ReimageBootVolume && inst.RootVolume() != nil {
				c.ActionArg = structs.ActionArgReimageBootVolume
			}
		}
	}); err != nil {
		return err
	}
	if e.Op == structs.OpRebuild {
		if e.ImageID != "" {
			inst.ImageID, inst.ImageProperties = e.ImageID, e.ImageProperties
		}
		if err := t.reimageBootVolume(inst, e); err != nil {
			return err
		}
	}
	if err := t.startEvent(inst, requestIDOf(e), op.event, a.HostID); err != nil {
		return err
	}
	return t.begin(inst, e, &structs.Task{Kind: structs.TaskKindPower, Step: structs.StepAgent, SourceHostID: a.HostID, SourceAllocID: a.ID}, op.task)
}

func requestIDOf(e *structs.InstanceTaskEntry) string {
	if e.Action == nil {
		return ""
	}
	return e.Action.RequestID
}

// advancePower finishes a power task when its allocation's report shows
// the work done: the action carried out (ActionDoneSeq), or the desired
// power state reached.
func (t *taskTxn) advancePower(inst *structs.Instance, a *structs.Allocation, u *structs.AllocClientUpdate) error {
	task := inst.Task
	if a.ID != task.SourceAllocID {
		return nil
	}
	op, ok := powerOps[task.Op]
	if !ok {
		return t.end(inst, "unknown operation "+task.Op)
	}
	errText := ""
	switch {
	case op.action != "":
		if a.ActionSeq == 0 || u.ActionDoneSeq < a.ActionSeq {
			return nil
		}
		errText = u.ActionError
	case u.ClientState == clientStateFor(op.desired):
	case strings.Contains(u.ClientDescription, "failed"):
		errText = u.ClientDescription
	default:
		return nil
	}
	inst.PowerState = u.PowerState
	switch {
	case errText != "" && task.Op == structs.OpRebuild:
		inst.VMState = vmError
		inst.Fault = &structs.Fault{Code: 500, Message: "Rebuild failed: " + errText, CreatedAt: t.at}
	case errText != "":
		inst.VMState = derivedVMState(task.PrevVMState, u)
	case op.after != "":
		inst.VMState = op.after
	default:
		inst.VMState = derivedVMState(vmActive, u)
	}
	if errText == "" && (task.Op == structs.OpRebuild || task.Op == structs.OpRebootHard) {
		inst.Fault = nil
	}
	return t.end(inst, errText)
}

func clientStateFor(desired string) string {
	if desired == structs.AllocDesiredStopped {
		return structs.AllocClientStopped
	}
	return structs.AllocClientRunning
}

// derivedVMState is the vm_state an agent's report shows, keeping
// states the power state cannot tell (rescued, error) from prev.
func derivedVMState(prev string, u *structs.AllocClientUpdate) string {
	switch u.ClientState {
	case structs.AllocClientStopped:
		return vmStopped
	case structs.AllocClientRunning:
		switch {
		case prev == vmRescued:
			return vmRescued
		case u.PowerState == structs.PowerPaused:
			return vmPaused
		case u.PowerState == structs.PowerSuspend:
			return vmSuspended
		}
		return vmActive
	}
	return prev
}

// relaunches reports whether a task that succeeds launches the guest
// anew: Nova's compute manager sets launched_at again after a rebuild,
// an evacuation, an unshelve, a rescue, and when a resize or cold
// migration finishes or is reverted.
func relaunches(task *structs.Task) bool {
	switch task.Kind {
	case structs.TaskKindRebuild, structs.TaskKindEvacuate, structs.TaskKindUnshelve, structs.TaskKindResize,
		structs.TaskKindMigrate, structs.TaskKindRevert:
		return true
	case structs.TaskKindPower:
		return task.Op == structs.OpRebuild || task.Op == structs.OpRescue
	}
	return false
}
