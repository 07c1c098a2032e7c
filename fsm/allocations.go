package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableAllocations is the name of the table, for Index and blocking queries.
const TableAllocations = "allocations"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableAllocations,
			Indexes: map[string]*memdb.IndexSchema{
				"id":       {Name: "id", Unique: true, Indexer: uniqueString(func(a *structs.Allocation) string { return a.ID })},
				"host":     {Name: "host", Indexer: sharedString(func(a *structs.Allocation) string { return a.HostID })},
				"instance": {Name: "instance", Indexer: sharedString(func(a *structs.Allocation) string { return a.InstanceID })},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.AllocationSnapshot,
		table:      TableAllocations,
		newRecord:  func() any { return new(structs.Allocation) },
		canonical:  func(rec any) { internAlloc(rec.(*structs.Allocation)) },
	})
}

// UpsertAllocation creates or replaces an allocation at index, keeping
// its host's usage in step.
func (s *StateStore) UpsertAllocation(index uint64, a *structs.Allocation) error {
	txn := s.writeTxn()
	defer txn.Abort()
	hb := newHostBatch()
	if err := insertAlloc(txn, index, a.Copy(), hb); err != nil {
		return err
	}
	if err := hb.flush(txn, index); err != nil {
		return err
	}
	return commitAt(txn, index, TableAllocations, TableHosts)
}

// AllocationByID returns an allocation or nil.
func (s *StateStore) AllocationByID(ws memdb.WatchSet, id string) (*structs.Allocation, error) {
	return first[*structs.Allocation](s.ReadTxn(), ws, TableAllocations, "id", id)
}

// AllocationsByHost lists what is allocated on a host.
func (s *StateStore) AllocationsByHost(ws memdb.WatchSet, hostID string) ([]*structs.Allocation, error) {
	return list[*structs.Allocation](s.ReadTxn(), ws, TableAllocations, "host", hostID)
}

// Allocations lists every allocation by id.
func (s *StateStore) Allocations(ws memdb.WatchSet) ([]*structs.Allocation, error) {
	return list[*structs.Allocation](s.ReadTxn(), ws, TableAllocations)
}

func init() {
	registerApply(structs.AllocClientUpdateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.AllocClientUpdateEntry
		if err := decodeBody(structs.AllocClientUpdateType, body, &e); err != nil {
			return err
		}
		return s.UpdateAllocsFromClient(index, &e)
	})
}

// UpdateAllocsFromClient records an agent's reports and what follows
// from them for each instance, the way Nova's compute manager updates
// vm_state, task_state and power_state as it works.
func (s *StateStore) UpdateAllocsFromClient(index uint64, e *structs.AllocClientUpdateEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	pre, err := readReports(txn, []*structs.AllocClientUpdateEntry{e})
	if err != nil {
		return err
	}
	if err := s.updateAllocsFromClientTxn(txn, index, e, pre); err != nil {
		return err
	}
	return commitAt(txn, index, allocUpdateTables...)
}

// allocUpdateTables are the tables an agent's report may change.
var allocUpdateTables = []string{TableAllocations, TableInstances, TableHosts, TableEvals, TableInstanceActions, TableMigrations, TableInstanceUsages}

// updateAllocsFromClientTxn applies one agent's reports in txn, which the
// caller commits; pre holds what was read up front (readReports), or is
// nil to read it as each update is applied.
func (s *StateStore) updateAllocsFromClientTxn(txn *memdb.Txn, index uint64, e *structs.AllocClientUpdateEntry, pre *reportReads) error {
	hb := newHostBatch()
	rescheduled := make(map[string]bool)
	for _, ev := range e.Reschedules {
		c := ev.Copy()
		c.CreateIndex, c.ModifyIndex = index, index
		if err := txn.Insert(TableEvals, c); err != nil {
			return fmt.Errorf("insert eval %s: %w", c.ID, err)
		}
		s.announceEvals(txn, c)
		for _, id := range c.InstanceIDs {
			rescheduled[id] = true
		}
	}
	for _, u := range e.Updates {
		old, err := pre.alloc(txn, u.AllocID)
		if err != nil {
			return fmt.Errorf("allocation lookup %s: %w", u.AllocID, err)
		}
		if old == nil {
			continue // deleted meanwhile; the report is moot
		}
		if old.HostID != e.HostID {
			return structs.Errorf(structs.KindPermission, "host %s reported on allocation %s of host %s", e.HostID, old.ID, old.HostID)
		}
		if err := applyClientUpdate(txn, index, e, old, u, rescheduled, hb, pre); err != nil {
			return err
		}
	}
	return hb.flush(txn, index)
}

// applyClientUpdate applies one update u of e to its allocation, stored
// as old. Nothing in txn has written old or its instance since they were
// read (up front in pre, or just now), so neither is read again.
func applyClientUpdate(txn *memdb.Txn, index uint64, e *structs.AllocClientUpdateEntry, old *structs.Allocation, u *structs.AllocClientUpdate, rescheduled map[string]bool, hb *hostBatch, pre *reportReads) error {
	a := old.Copy()
	a.ClientState, a.ClientDescription, a.PowerState = u.ClientState, u.ClientDescription, u.PowerState
	if u.ActionDoneSeq > a.ActionDoneSeq {
		a.ActionDoneSeq, a.ActionError = u.ActionDoneSeq, u.ActionError
	}
	actionDone := a.PendingAction != "" && a.ActionDoneSeq >= a.ActionSeq
	if actionDone {
		a.PendingAction, a.ActionArg = "", ""
	}
	t := &taskTxn{txn: txn, index: index, at: e.UpdatedAt, hb: hb}
	inst, err := pre.instance(t, a.InstanceID)
	if err != nil {
		return err
	}
	inTask := inst != nil && inst.Task != nil
	switch u.ClientState {
	case structs.AllocClientDeleted:
		return t.allocDeleted(inst, old, u)
	case structs.AllocClientFailed:
		if inTask {
			handled, err := t.taskAllocFailed(inst, old, u.ClientDescription)
			if err != nil || handled {
				return err
			}
		}
		return allocFailed(txn, index, e, old, a, rescheduled[a.InstanceID], hb)
	}
	if u.ClientState == structs.AllocClientStopped && a.DesiredState == structs.AllocDesiredRunning && a.PendingAction == "" &&
		old.ClientState != structs.AllocClientSpawning && old.ClientState != structs.AllocClientPending {
		// The guest shut itself down. As Nova's power sync does, the
		// servers accept it (SHUTOFF) rather than restart it; a later
		// start changes the desired state back and wakes the agent.
		a.DesiredState, a.AllocModifyIndex = structs.AllocDesiredStopped, index
	}
	if err := insertAllocOver(txn, index, a, old, inst, hb); err != nil {
		return err
	}
	wasSpawning := old.ClientState == structs.AllocClientSpawning || old.ClientState == structs.AllocClientPending
	if u.ClientState == structs.AllocClientRunning && wasSpawning {
		if err := clearBuildFailures(txn, index, a.HostID); err != nil {
			return err
		}
	}
	if inst == nil {
		return nil
	}
	if inTask {
		return t.advanceTask(inst, a, u)
	}
	if a.HostID != inst.HostID || isResizeSource(inst, a) {
		return nil // a leftover copy (a resize's source, here or elsewhere): not the instance's state
	}
	if inst.VMState == structs.VMStateBuilding && u.ClientState == structs.AllocClientRunning {
		acts, err := pre.instanceActions(txn, inst.ID)
		if err != nil {
			return err
		}
		if err := finishCreateOf(t, inst, acts, ""); err != nil {
			return err
		}
	}
	c := inst.Copy()
	deriveFromReport(c, a, u, actionDone, e.UpdatedAt)
	c.ModifyIndex = index
	return replaceInstance(txn, inst, c)
}

// clearBuildFailures resets a host's count of failed builds after one
// succeeded. A host without failures is left as it is: rewriting it would
// change the hosts table, and so wake every watcher of it and make every
// scheduler worker read the hosts again, on every successful boot.
func clearBuildFailures(txn *memdb.Txn, index uint64, hostID string) error {
	raw, err := txn.First(TableHosts, "id", hostID)
	if err != nil {
		return fmt.Errorf("host lookup %s: %w", hostID, err)
	}
	if raw == nil || raw.(*structs.Host).BuildFailures == 0 {
		return nil
	}
	return updateHost(txn, index, hostID, func(h *structs.Host) { h.BuildFailures = 0 })
}

// stickyStates are vm_states an agent's power report cannot change: only
// an operation leaves them.
var stickyStates = map[string]bool{
	structs.VMStateResized: true, structs.VMStateRescued: true, structs.VMStateShelved: true,
	structs.VMStateShelvedOffloaded: true, structs.VMStateSoftDeleted: true,
}

// deriveFromReport updates an instance outside any task from its
// agent's report, the way Nova's compute manager and power sync do.
func deriveFromReport(i *structs.Instance, a *structs.Allocation, u *structs.AllocClientUpdate, actionDone bool, at int64) {
	i.PowerState, i.UpdatedAt = u.PowerState, at
	sticky := stickyStates[i.VMState]
	switch u.ClientState {
	case structs.AllocClientSpawning:
		// A spawning report sent before the agent saw a delete must not
		// undo it: allocDeleted purges only a deleting instance.
		if i.VMState == structs.VMStateBuilding && i.TaskState != structs.TaskDeleting {
			i.TaskState = structs.TaskSpawning
		}
	case structs.AllocClientRunning:
		if !sticky {
			i.VMState = structs.VMStateActive
			switch u.PowerState {
			case structs.PowerPaused:
				i.VMState = structs.VMStatePaused
			case structs.PowerSuspend:
				i.VMState = structs.VMStateSuspended
			}
			i.Fault = nil
			if i.LaunchedAt == 0 {
				i.LaunchedAt = at
			}
		}
		if i.TaskState != structs.TaskDeleting && (a.PendingAction == "" || actionDone) && a.DesiredState == structs.AllocDesiredRunning {
			i.TaskState = ""
		}
	case structs.AllocClientStopped:
		if !sticky {
			i.VMState = structs.VMStateStopped
		}
		if i.TaskState != structs.TaskDeleting && a.DesiredState == structs.AllocDesiredStopped {
			i.TaskState = ""
		}
	}
}

// finishCreate closes the create action of an instance that came up
// (errText empty) or went to ERROR.
func finishCreate(t *taskTxn, inst *structs.Instance, errText string) error {
	acts, err := actionsOfInstance(t.txn, nil, inst.ID)
	if err != nil {
		return err
	}
	return finishCreateOf(t, inst, acts, errText)
}

// finishCreateOf is finishCreate for an instance whose actions, acts,
// have been read, and not written since.
func finishCreateOf(t *taskTxn, inst *structs.Instance, acts []*structs.InstanceAction, errText string) error {
	for _, act := range acts {
		if act.Action == "create" {
			if err := changeAction(t.txn, t.index, act, finishEventFn(errText, t.at)); err != nil {
				return err
			}
		}
	}
	return nil
}

// allocDeleted records that an agent destroyed an allocation's copy: the
// allocation goes, a confirmed resize's migration completes, a task
// waiting for it moves on, and a deleted instance goes once nothing of
// it is left.
func (t *taskTxn) allocDeleted(inst *structs.Instance, old *structs.Allocation, u *structs.AllocClientUpdate) error {
	if err := deleteAlloc(t.txn, old, t.hb); err != nil {
		return err
	}
	if inst == nil {
		return nil
	}
	// A confirmed resize's source copy may go while a later task runs.
	if err := t.confirmedSource(inst, old); err != nil {
		return err
	}
	if inst.Task != nil {
		return t.advanceTask(inst, old, u)
	}
	if inst.TaskState != structs.TaskDeleting {
		return nil
	}
	allocs, err := allocsOfInstance(t.txn, inst.ID)
	if err != nil {
		return err
	}
	for _, a := range allocs {
		if !a.Terminal() && a.DesiredState == structs.AllocDesiredDeleted {
			return nil // another copy is still being destroyed
		}
	}
	return purgeInstance(t.txn, t.index, inst.ID, t.hb, t.at)
}

// confirmedSource completes the migration whose confirmed resize was
// waiting for this source copy to go.
func (t *taskTxn) confirmedSource(inst *structs.Instance, old *structs.Allocation) error {
	migs, err := list[*structs.Migration](t.txn, nil, TableMigrations, "instance", inst.ID)
	if err != nil {
		return err
	}
	for _, m := range migs {
		if m.Status == structs.MigrationConfirming && m.SourceHostID == old.HostID {
			if err := setMigration(t.txn, t.index, m.ID, structs.MigrationConfirmed, t.at, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// allocFailed handles a failed allocation: a failed build is recorded as
// an attempt and either rescheduled (the leader put the evaluation in the
// same entry) or ends in ERROR with the fault the leader computed; a
// failure of a running instance puts it in ERROR.
func allocFailed(txn *memdb.Txn, index uint64, e *structs.AllocClientUpdateEntry, old, a *structs.Allocation, reschedule bool, hb *hostBatch) error {
	building := old.ClientState == structs.AllocClientPending || old.ClientState == structs.AllocClientSpawning
	if building {
		if err := deleteAlloc(txn, old, hb); err != nil {
			return err
		}
		if err := updateHost(txn, index, a.HostID, func(h *structs.Host) { h.BuildFailures++ }); err != nil {
			return err
		}
		if !reschedule {
			if err := finishCreate(&taskTxn{txn: txn, index: index, at: e.UpdatedAt, hb: hb}, &structs.Instance{ID: a.InstanceID}, a.ClientDescription); err != nil {
				return err
			}
		}
		return updateInstance(txn, index, a.InstanceID, func(i *structs.Instance) {
			i.Attempts = append(i.Attempts, &structs.BuildAttempt{HostID: a.HostID, Error: a.ClientDescription})
			i.HostID, i.PowerState, i.UpdatedAt = "", structs.PowerNoState, e.UpdatedAt
			if reschedule {
				i.VMState, i.TaskState = structs.VMStateBuilding, structs.TaskScheduling
				return
			}
			i.VMState, i.TaskState = structs.VMStateError, ""
			if f := e.Faults[a.InstanceID]; f != nil {
				fc := *f
				i.Fault = &fc
			} else {
				i.Fault = &structs.Fault{Code: 500, Message: "Build of instance failed: " + a.ClientDescription, CreatedAt: e.UpdatedAt}
			}
		})
	}
	if err := insertAlloc(txn, index, a, hb); err != nil {
		return err
	}
	return updateInstance(txn, index, a.InstanceID, func(i *structs.Instance) {
		i.VMState, i.TaskState, i.PowerState, i.UpdatedAt = structs.VMStateError, "", structs.PowerNoState, e.UpdatedAt
		i.Fault = &structs.Fault{Code: 500, Message: a.ClientDescription, CreatedAt: e.UpdatedAt}
	})
}

// AllocationsByInstance lists an instance's allocations.
func (s *StateStore) AllocationsByInstance(ws memdb.WatchSet, instanceID string) ([]*structs.Allocation, error) {
	return list[*structs.Allocation](s.ReadTxn(), ws, TableAllocations, "instance", instanceID)
}
