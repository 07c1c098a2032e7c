package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableInstances is the name of the table, for Index and blocking queries.
const TableInstances = "instances"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableInstances,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("ID"),
				"host":    {Name: "host", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "HostID"}},
				"project": {Name: "project", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.InstanceSnapshot,
		table:      TableInstances,
		newRecord:  func() any { return new(structs.Instance) },
	})
}

// UpsertInstance creates or replaces an instance at index.
func (s *StateStore) UpsertInstance(index uint64, inst *structs.Instance) error {
	txn := s.writeTxn()
	defer txn.Abort()
	c := inst.Copy()
	err := upsert(txn, TableInstances, index, c,
		func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
		func(o any) uint64 { return o.(*structs.Instance).CreateIndex }, c.ID)
	if err != nil {
		return err
	}
	return commitAt(txn, index, TableInstances)
}

// DeleteInstance removes an instance at index.
func (s *StateStore) DeleteInstance(index uint64, id string) error {
	return s.deleteOne(index, TableInstances, "instance", id)
}

// InstanceByID returns an instance or nil.
func (s *StateStore) InstanceByID(ws memdb.WatchSet, id string) (*structs.Instance, error) {
	return first[*structs.Instance](s.ReadTxn(), ws, TableInstances, "id", id)
}

// Instances lists every instance by id.
func (s *StateStore) Instances(ws memdb.WatchSet) ([]*structs.Instance, error) {
	return list[*structs.Instance](s.ReadTxn(), ws, TableInstances)
}

// InstancesByHost lists the instances placed on a host.
func (s *StateStore) InstancesByHost(ws memdb.WatchSet, hostID string) ([]*structs.Instance, error) {
	return list[*structs.Instance](s.ReadTxn(), ws, TableInstances, "host", hostID)
}

func init() {
	registerApply(structs.InstanceCreateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.InstanceCreateEntry
		if err := decodeBody(structs.InstanceCreateType, body, &e); err != nil {
			return err
		}
		return s.CreateInstances(index, &e)
	})
	registerApply(structs.InstanceDeleteType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.InstanceDeleteEntry
		if err := decodeBody(structs.InstanceDeleteType, body, &e); err != nil {
			return err
		}
		return s.DeleteInstances(index, &e)
	})
	registerApply(structs.InstanceActionType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.InstanceActionEntry
		if err := decodeBody(structs.InstanceActionType, body, &e); err != nil {
			return err
		}
		return s.InstanceAction(index, &e)
	})
}

// CreateInstances commits new instances with their evaluation.
func (s *StateStore) CreateInstances(index uint64, e *structs.InstanceCreateEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	for _, inst := range e.Instances {
		c := inst.Copy()
		if c.Flavor == nil {
			c.Flavor = e.Flavor
		}
		c.CreateIndex, c.ModifyIndex = index, index
		if err := txn.Insert(TableInstances, c); err != nil {
			return fmt.Errorf("insert instance %s: %w", c.ID, err)
		}
		if e.RequestID != "" {
			err := insertAction(txn, index, &structs.InstanceAction{
				RequestID: e.RequestID, InstanceID: c.ID, Action: "create", ProjectID: c.ProjectID, UserID: c.UserID,
				StartTime: e.CreatedAt, Events: []*structs.InstanceActionEvent{{Event: evBuild, StartTime: e.CreatedAt}},
			})
			if err != nil {
				return err
			}
		}
	}
	tables := []string{TableInstances, TableInstanceActions}
	if e.Eval != nil {
		ev := e.Eval.Copy()
		ev.CreateIndex, ev.ModifyIndex = index, index
		if err := txn.Insert(TableEvals, ev); err != nil {
			return fmt.Errorf("insert eval %s: %w", ev.ID, err)
		}
		tables = append(tables, TableEvals)
	}
	return commitAt(txn, index, tables...)
}

// DeleteInstances marks instances with a live allocation as deleting
// (their agent destroys them) and purges the others at once.
func (s *StateStore) DeleteInstances(index uint64, e *structs.InstanceDeleteEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	hb := newHostBatch()
	for _, id := range e.Deleting {
		allocs, err := allocsOfInstance(txn, id)
		if err != nil {
			return err
		}
		for _, a := range allocs {
			c := a.Copy()
			c.DesiredState = structs.AllocDesiredDeleted
			c.AllocModifyIndex = index
			if err := insertAlloc(txn, index, c, hb); err != nil {
				return err
			}
		}
		if err := updateInstance(txn, index, id, func(i *structs.Instance) {
			i.TaskState, i.UpdatedAt = structs.TaskDeleting, e.UpdatedAt
		}); err != nil {
			return err
		}
	}
	for _, id := range e.Purge {
		if err := purgeInstance(txn, index, id, hb); err != nil {
			return err
		}
	}
	if err := hb.flush(txn, index); err != nil {
		return err
	}
	return commitAt(txn, index, TableInstances, TableAllocations, TableHosts)
}

// purgeInstance removes an instance and its allocations, freeing usage.
func purgeInstance(txn *memdb.Txn, index uint64, id string, hb *hostBatch) error {
	allocs, err := allocsOfInstance(txn, id)
	if err != nil {
		return err
	}
	for _, a := range allocs {
		if err := deleteAlloc(txn, a, hb); err != nil {
			return err
		}
	}
	raw, err := txn.First(TableInstances, "id", id)
	if err != nil {
		return fmt.Errorf("instance lookup %s: %w", id, err)
	}
	if raw != nil {
		if err := txn.Delete(TableInstances, raw); err != nil {
			return fmt.Errorf("delete instance %s: %w", id, err)
		}
	}
	return nil
}

// InstanceAction records a power action for the instance's agent: the
// allocation's desired state or pending action, and the task state Nova
// shows while it runs.
func (s *StateStore) InstanceAction(index uint64, e *structs.InstanceActionEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	hb := newHostBatch()
	allocs, err := allocsOfInstance(txn, e.InstanceID)
	if err != nil {
		return err
	}
	var task string
	for _, a := range allocs {
		if a.Terminal() || a.DesiredState == structs.AllocDesiredDeleted {
			continue
		}
		c := a.Copy()
		switch e.Action {
		case "start":
			c.DesiredState, task = structs.AllocDesiredRunning, structs.TaskPoweringOn
		case "stop":
			c.DesiredState, task = structs.AllocDesiredStopped, structs.TaskPoweringOff
		case structs.ActionRebootSoft, structs.ActionRebootHard:
			c.DesiredState = structs.AllocDesiredRunning
			c.PendingAction, c.ActionSeq = e.Action, index
			task = structs.TaskRebooting
			if e.Action == structs.ActionRebootHard {
				task = structs.TaskRebootHard
			}
		default:
			return structs.Errorf(structs.KindInvalid, "unknown instance action %q", e.Action)
		}
		c.AllocModifyIndex = index
		if err := insertAlloc(txn, index, c, hb); err != nil {
			return err
		}
	}
	if task == "" {
		return structs.Errorf(structs.KindConflict, "instance %s has no running allocation to act on", e.InstanceID)
	}
	if err := updateInstance(txn, index, e.InstanceID, func(i *structs.Instance) {
		i.TaskState, i.UpdatedAt = task, e.UpdatedAt
	}); err != nil {
		return err
	}
	if err := hb.flush(txn, index); err != nil {
		return err
	}
	return commitAt(txn, index, TableInstances, TableAllocations)
}
