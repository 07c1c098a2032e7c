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
				"id":       idIndex("ID"),
				"host":     {Name: "host", Indexer: &memdb.StringFieldIndex{Field: "HostID"}},
				"instance": {Name: "instance", Indexer: &memdb.StringFieldIndex{Field: "InstanceID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.AllocationSnapshot,
		table:      TableAllocations,
		newRecord:  func() any { return new(structs.Allocation) },
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
	hb := newHostBatch()
	rescheduled := make(map[string]bool)
	for _, ev := range e.Reschedules {
		c := ev.Copy()
		c.CreateIndex, c.ModifyIndex = index, index
		if err := txn.Insert(TableEvals, c); err != nil {
			return fmt.Errorf("insert eval %s: %w", c.ID, err)
		}
		for _, id := range c.InstanceIDs {
			rescheduled[id] = true
		}
	}
	for _, u := range e.Updates {
		raw, err := txn.First(TableAllocations, "id", u.AllocID)
		if err != nil {
			return fmt.Errorf("allocation lookup %s: %w", u.AllocID, err)
		}
		if raw == nil {
			continue // deleted meanwhile; the report is moot
		}
		old := raw.(*structs.Allocation)
		if old.HostID != e.HostID {
			return structs.Errorf(structs.KindPermission, "host %s reported on allocation %s of host %s", e.HostID, old.ID, old.HostID)
		}
		if err := applyClientUpdate(txn, index, e, old, u, rescheduled, hb); err != nil {
			return err
		}
	}
	if err := hb.flush(txn, index); err != nil {
		return err
	}
	return commitAt(txn, index, TableAllocations, TableInstances, TableHosts, TableEvals)
}

func applyClientUpdate(txn *memdb.Txn, index uint64, e *structs.AllocClientUpdateEntry, old *structs.Allocation, u *structs.AllocClientUpdate, rescheduled map[string]bool, hb *hostBatch) error {
	a := old.Copy()
	a.ClientState, a.ClientDescription, a.PowerState = u.ClientState, u.ClientDescription, u.PowerState
	if u.ActionDoneSeq > a.ActionDoneSeq {
		a.ActionDoneSeq = u.ActionDoneSeq
	}
	actionDone := a.PendingAction != "" && a.ActionDoneSeq >= a.ActionSeq
	if actionDone {
		a.PendingAction = ""
	}
	at := e.UpdatedAt
	switch u.ClientState {
	case structs.AllocClientDeleted:
		if err := deleteAlloc(txn, old, hb); err != nil {
			return err
		}
		if old.DesiredState == structs.AllocDesiredDeleted {
			return purgeInstance(txn, index, old.InstanceID, hb)
		}
		return nil
	case structs.AllocClientFailed:
		return allocFailed(txn, index, e, old, a, rescheduled[a.InstanceID], hb)
	}
	if u.ClientState == structs.AllocClientStopped && a.DesiredState == structs.AllocDesiredRunning && a.PendingAction == "" &&
		old.ClientState != structs.AllocClientSpawning && old.ClientState != structs.AllocClientPending {
		// The guest shut itself down. As Nova's power sync does, the
		// servers accept it (SHUTOFF) rather than restart it; a later
		// start changes the desired state back and wakes the agent.
		a.DesiredState, a.AllocModifyIndex = structs.AllocDesiredStopped, index
	}
	if err := insertAlloc(txn, index, a, hb); err != nil {
		return err
	}
	wasSpawning := old.ClientState == structs.AllocClientSpawning || old.ClientState == structs.AllocClientPending
	if u.ClientState == structs.AllocClientRunning && wasSpawning {
		if err := updateHost(txn, index, a.HostID, func(h *structs.Host) { h.BuildFailures = 0 }); err != nil {
			return err
		}
	}
	return updateInstance(txn, index, a.InstanceID, func(i *structs.Instance) {
		i.PowerState, i.UpdatedAt = u.PowerState, at
		switch u.ClientState {
		case structs.AllocClientSpawning:
			i.VMState, i.TaskState = structs.VMStateBuilding, structs.TaskSpawning
		case structs.AllocClientRunning:
			i.VMState = structs.VMStateActive
			if u.PowerState == structs.PowerPaused {
				i.VMState = structs.VMStatePaused
			}
			i.Fault = nil
			if i.TaskState != structs.TaskDeleting && (a.PendingAction == "" || actionDone) && a.DesiredState == structs.AllocDesiredRunning {
				i.TaskState = ""
			}
		case structs.AllocClientStopped:
			i.VMState = structs.VMStateStopped
			if i.TaskState != structs.TaskDeleting && a.DesiredState == structs.AllocDesiredStopped {
				i.TaskState = ""
			}
		}
	})
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
