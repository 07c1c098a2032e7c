package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// The conductor: Stratus's nova-conductor. Nova's conductor runs
// multi-step operations (resize, migrate, live migrate, evacuate, shelve,
// snapshot, power actions) as RPC call chains held in a process's memory;
// here each is a task — a state machine kept on the instance and stepped
// by FSM entries — so it survives leader changes and crashes. The files
// conductor_*.go hold its operations: moves, power, shelve, snapshot,
// admin resets, and idempotent task submissions (conductor_requests.go);
// the leader's periodic part is server/conductor.go.
//
// An operation starts with an InstanceTask entry:
// its op handler checks the instance's state (again: it may have changed
// since the leader checked), records the instance action, and sets the
// first step: allocations' desired states and actions for agents, an
// evaluation for the scheduler. Each later step is taken by the FSM in
// the very entry that records what the step waited for (an agent's
// report, a plan), so no leader memory is involved: a new leader, or an
// agent restarted mid-step, simply carries on from state.

// taskTxn is one Apply's write transaction and what it touches.
type taskTxn struct {
	txn   *memdb.Txn
	index uint64
	at    int64
	hb    *hostBatch
	// store is set for a task's own entry (StartInstanceTask), whose
	// op handlers may create an evaluation to announce.
	store *StateStore
}

// opHandler starts an operation on inst (a copy it may change and store).
type opHandler func(t *taskTxn, inst *structs.Instance, e *structs.InstanceTaskEntry) error

var opHandlers = map[string]opHandler{}

func registerOp(op string, h opHandler) {
	if _, dup := opHandlers[op]; dup {
		panic("fsm: two handlers for op " + op)
	}
	opHandlers[op] = h
}

// taskTables are the tables a task entry may change.
var taskTables = []string{TableInstances, TableAllocations, TableHosts, TableEvals, TableInstanceActions, TableMigrations, TableInstanceUsages}

func init() {
	registerApply(structs.InstanceTaskType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.InstanceTaskEntry
		if err := decodeBody(structs.InstanceTaskType, body, &e); err != nil {
			return err
		}
		return s.StartInstanceTask(index, &e)
	})
}

// StartInstanceTask applies an InstanceTask entry. A refused operation
// changes nothing and returns the reason.
func (s *StateStore) StartInstanceTask(index uint64, e *structs.InstanceTaskEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	t := &taskTxn{txn: txn, index: index, at: e.UpdatedAt, hb: newHostBatch(), store: s}
	h := opHandlers[e.Op]
	if h == nil {
		return structs.Errorf(structs.KindInvalid, "unknown instance operation %q", e.Op)
	}
	// A submission retried with its idempotency key is answered with
	// the task it started (conductor_requests.go).
	if err := taskReplay(txn, e); err != nil {
		return err
	}
	inst, err := t.instance(e.InstanceID)
	if err != nil {
		return err
	}
	if inst == nil {
		return structs.Errorf(structs.KindNotFound, "instance %q not found", e.InstanceID)
	}
	if e.Action != nil {
		// A request retried after its first attempt committed (the
		// leader changed before answering) is not carried out twice.
		if prev, err := first[*structs.InstanceAction](txn, nil, TableInstanceActions, "id", e.InstanceID, e.Action.RequestID); err != nil {
			return err
		} else if prev != nil && e.Action.RequestID != "" && prev.Action == e.Action.Action {
			return &TaskAlreadyApplied{Index: prev.CreateIndex}
		}
		if err := insertAction(txn, index, e.Action); err != nil {
			return err
		}
	}
	if err := t.checkVolumesFollow(inst, e.Op); err != nil {
		return err
	}
	if err := h(t, inst.Copy(), e); err != nil {
		return err
	}
	keyed, err := recordTaskRequest(txn, index, e)
	if err != nil {
		return err
	}
	if err := t.hb.flush(txn, index); err != nil {
		return err
	}
	return commitAt(txn, index, append(keyed, taskTables...)...)
}

// TaskAlreadyApplied is StartInstanceTask's answer to an entry whose
// request was applied before, at Index: nothing changed.
type TaskAlreadyApplied struct {
	// Index is the Raft index of the entry that carried it out.
	Index uint64
	// Request is the record of the first submission when the entry was
	// recognised by its idempotency key, nil when by its request id.
	Request *structs.TaskRequest
}

// Error makes a duplicate reach callers that only look for errors as
// one; the server's task endpoint recognises it and answers success.
func (d *TaskAlreadyApplied) Error() string {
	return fmt.Sprintf("request already applied at index %d", d.Index)
}

func (t *taskTxn) instance(id string) (*structs.Instance, error) {
	return first[*structs.Instance](t.txn, nil, TableInstances, "id", id)
}

func (t *taskTxn) host(id string) (*structs.Host, error) {
	if id == "" {
		return nil, nil
	}
	return first[*structs.Host](t.txn, nil, TableHosts, "id", id)
}

func (t *taskTxn) alloc(id string) (*structs.Allocation, error) {
	if id == "" {
		return nil, nil
	}
	return first[*structs.Allocation](t.txn, nil, TableAllocations, "id", id)
}

// putInstance stores inst as changed at this entry.
func (t *taskTxn) putInstance(inst *structs.Instance) error {
	inst.ModifyIndex, inst.UpdatedAt = t.index, t.at
	return insertInstance(t.txn, inst)
}

// command stores a copy of a with what fn changes as new work for its
// agent.
func (t *taskTxn) command(a *structs.Allocation, fn func(c *structs.Allocation)) (*structs.Allocation, error) {
	c := a.Copy()
	fn(c)
	c.AllocModifyIndex = t.index
	return c, insertAlloc(t.txn, t.index, c, t.hb)
}

// ask asks a's agent for a one-off action, carried out once.
func (t *taskTxn) ask(a *structs.Allocation, action, arg string) error {
	_, err := t.command(a, func(c *structs.Allocation) {
		c.PendingAction, c.ActionSeq, c.ActionArg = action, t.index, arg
	})
	return err
}

// setDesired changes what a's agent must converge to.
// A copy desired running no longer exports its disks to a move
// (conductor_disks.go): its guest may write to them again.
func (t *taskTxn) setDesired(a *structs.Allocation, desired string) error {
	_, err := t.command(a, func(c *structs.Allocation) {
		c.DesiredState = desired
		if desired == structs.AllocDesiredRunning {
			c.DiskExportToken = ""
		}
	})
	return err
}

// drop removes an allocation outright, freeing its resources: for hosts
// that are down (their agent destroys what is left when it returns, as
// the allocation is gone) and for copies already gone.
func (t *taskTxn) drop(a *structs.Allocation) error {
	if a == nil {
		return nil
	}
	return deleteAlloc(t.txn, a, t.hb)
}

// release asks a's agent to destroy its copy, or drops the allocation
// at once when its host is down or it never spawned anything.
func (t *taskTxn) release(a *structs.Allocation) error {
	if a == nil {
		return nil
	}
	up, err := t.hostUp(a.HostID)
	if err != nil {
		return err
	}
	if !up || a.DesiredState == structs.AllocDesiredHeld || a.Terminal() {
		return t.drop(a)
	}
	return t.setDesired(a, structs.AllocDesiredDeleted)
}

func (t *taskTxn) hostUp(id string) (bool, error) {
	h, err := t.host(id)
	if err != nil || h == nil {
		return false, err
	}
	return h.Up(), nil
}

// primaryAlloc is the live allocation of inst on its host, or nil.
func (t *taskTxn) primaryAlloc(inst *structs.Instance) (*structs.Allocation, error) {
	if inst.HostID == "" {
		return nil, nil
	}
	allocs, err := allocsOfInstance(t.txn, inst.ID)
	if err != nil {
		return nil, err
	}
	for _, a := range allocs {
		if a.HostID == inst.HostID && !a.Terminal() && a.DesiredState != structs.AllocDesiredDeleted && !isResizeSource(inst, a) {
			return a, nil
		}
	}
	return nil, nil
}

// isResizeSource reports whether a is the source allocation of inst's
// resize awaiting confirmation: on the instance's own host after a
// same-host resize, but not the allocation that runs it.
func isResizeSource(inst *structs.Instance, a *structs.Allocation) bool {
	return inst.Resize != nil && a.ID == inst.Resize.SourceAllocID
}

// event helpers bound to the task's action.
func (t *taskTxn) startEvent(inst *structs.Instance, requestID, event, hostID string) error {
	return startEvent(t.txn, t.index, inst.ID, requestID, event, hostID, t.at)
}

func (t *taskTxn) finishEvent(inst *structs.Instance, requestID, errText string) error {
	return finishEvent(t.txn, t.index, inst.ID, requestID, errText, t.at)
}

// begin puts inst in a task and stores it.
func (t *taskTxn) begin(inst *structs.Instance, e *structs.InstanceTaskEntry, task *structs.Task, taskState string) error {
	task.Op, task.StartedAt = e.Op, t.at
	if e.Action != nil {
		task.RequestID = e.Action.RequestID
	}
	if task.PrevVMState == "" {
		task.PrevVMState = inst.VMState
	}
	inst.Task, inst.TaskState = task, taskState
	return t.putInstance(inst)
}

// end finishes inst's task: its event closes with errText (empty for
// success) and the instance leaves the task.
func (t *taskTxn) end(inst *structs.Instance, errText string) error {
	if inst.Task != nil {
		if err := t.finishEvent(inst, inst.Task.RequestID, errText); err != nil {
			return err
		}
		// However an attach or detach ends (the agent's report, a failed
		// allocation, a reset), its volume settles with it.
		if err := t.settleVolumeTask(inst, errText); err != nil {
			return err
		}
		if err := t.settleMovedVolumes(inst, errText); err != nil { // conductor_volume_moves.go
			return err
		}
		if errText == "" && relaunches(inst.Task) {
			inst.LaunchedAt = t.at
		}
	}
	inst.Task, inst.TaskState = nil, ""
	if inst.VMState != structs.VMStateShelved && inst.VMState != structs.VMStateShelvedOffloaded {
		inst.ShelvedAt = 0
	}
	return t.putInstance(inst)
}

// checkState refuses an operation from the wrong vm_state or while
// another task runs, as Nova's API does (409).
func checkState(inst *structs.Instance, op string, allowed ...string) error {
	if inst.Task != nil || (inst.TaskState != "" && inst.TaskState != structs.TaskDeleting) {
		return structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s while it is in task_state %s", op, inst.ID, taskStateOf(inst))
	}
	if inst.TaskState == structs.TaskDeleting {
		return structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s while it is being deleted", op, inst.ID)
	}
	for _, s := range allowed {
		if inst.VMState == s {
			return nil
		}
	}
	return structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s while it is in vm_state %s", op, inst.ID, inst.VMState)
}

func taskStateOf(inst *structs.Instance) string {
	if inst.TaskState == "" && inst.Task != nil {
		return inst.Task.Kind
	}
	return inst.TaskState
}

// needAlloc returns inst's live allocation on an up host, or a conflict.
func (t *taskTxn) needAlloc(inst *structs.Instance, op string) (*structs.Allocation, error) {
	a, err := t.primaryAlloc(inst)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s: it has no allocation on a host", op, inst.ID)
	}
	up, err := t.hostUp(a.HostID)
	if err != nil {
		return nil, err
	}
	if !up {
		return nil, structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s: its host is down", op, inst.ID)
	}
	return a, nil
}

// advanceTask hands an allocation's report to the instance's task.
func (t *taskTxn) advanceTask(inst *structs.Instance, a *structs.Allocation, u *structs.AllocClientUpdate) error {
	inst = inst.Copy()
	switch inst.Task.Kind {
	case structs.TaskKindPower:
		if inst.Task.Op == structs.OpSoftDelete || inst.Task.Op == structs.OpRestore {
			return t.advanceShelve(inst, a, u)
		}
		if inst.Task.Op == structs.OpAttachVolume || inst.Task.Op == structs.OpDetachVolume || inst.Task.Op == structs.OpSwapVolume {
			return t.advanceVolume(inst, a, u)
		}
		return t.advancePower(inst, a, u)
	case structs.TaskKindResize, structs.TaskKindMigrate, structs.TaskKindLiveMigrate, structs.TaskKindEvacuate:
		return t.advanceMove(inst, a, u)
	case structs.TaskKindRevert:
		return t.advanceRevert(inst, a, u)
	case structs.TaskKindShelve, structs.TaskKindOffload, structs.TaskKindUnshelve:
		return t.advanceShelve(inst, a, u)
	}
	return nil
}

// taskAllocFailed handles a failed allocation of an instance in a task:
// a move's destination failing fails the move (the source carries on);
// any other failure ends the task with the error, and the caller then
// records the failure as for any instance.
func (t *taskTxn) taskAllocFailed(inst *structs.Instance, old *structs.Allocation, desc string) (handled bool, err error) {
	inst = inst.Copy()
	task := inst.Task
	if old.ID == task.DestAllocID && old.ID != task.SourceAllocID {
		if err := t.drop(old); err != nil {
			return true, err
		}
		if task.Kind == structs.TaskKindUnshelve && task.EvalID == "" {
			return false, t.end(inst, desc)
		}
		a := old.Copy()
		a.ClientDescription = desc
		return true, t.destFailed(inst, a)
	}
	if task.DestAllocID != "" && task.DestAllocID != old.ID {
		dest, err := t.alloc(task.DestAllocID)
		if err != nil {
			return true, err
		}
		if err := t.release(dest); err != nil {
			return true, err
		}
	}
	if err := t.setMigration(task, structs.MigrationError, nil); err != nil {
		return true, err
	}
	return false, t.end(inst, desc)
}
