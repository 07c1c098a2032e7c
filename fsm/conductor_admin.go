package fsm

import (
	"github.com/stratus-cloud/stratus/structs"
)

// An administrator's os-resetState forces an instance's vm_state to
// active or error and drops whatever task it is in, for an instance
// stuck after a failure Stratus could not resolve on its own. As in
// Nova nothing is done to the guest; unlike Nova, a move in flight is
// failed as a dead destination fails it (its destination's resources
// are released and its migration record ends in error) and a resize
// awaiting confirmation keeps its new host and flavor and frees the old
// host, so no resources are left held by a task that no longer exists.

func init() {
	registerOp(structs.OpResetState, (*taskTxn).resetState)
}

// resetReason is the error recorded on the events a reset cuts short.
const resetReason = "reset by an administrator (os-resetState)"

func (t *taskTxn) resetState(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	if e.State != vmActive && e.State != vmError {
		return structs.Errorf(structs.KindInvalid, "os-resetState sets vm_state active or error, not %q", e.State)
	}
	if inst.TaskState == structs.TaskDeleting {
		return structs.Errorf(structs.KindConflict, "Cannot 'os-resetState' instance %s while it is being deleted", inst.ID)
	}
	switch {
	case inst.Task != nil && moveEvents[inst.Task.Kind] != "":
		inst.Task = inst.Task.Copy()
		if err := t.failMove(inst, resetReason); err != nil {
			return err
		}
	case inst.Task != nil:
		if err := t.end(inst, resetReason); err != nil {
			return err
		}
	}
	inst.TaskState = ""
	if r := inst.Resize; r != nil {
		src, err := t.alloc(r.SourceAllocID)
		if err != nil {
			return err
		}
		if err := t.release(src); err != nil {
			return err
		}
		if err := setMigration(t.txn, t.index, r.MigrationID, structs.MigrationError, t.at, nil); err != nil {
			return err
		}
		inst.Resize = nil
	}
	inst.VMState = e.State
	return t.putInstance(inst)
}
