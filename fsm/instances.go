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
				"id":   {Name: "id", Unique: true, Indexer: uniqueString(func(i *structs.Instance) string { return i.ID })},
				"host": {Name: "host", AllowMissing: true, Indexer: sharedString(func(i *structs.Instance) string { return i.HostID })},
				// No index by project: each entry of an index costs
				// an instance ~350 B of radix tree, and no hot path
				// needs one (quota checks read usage counters,
				// quota_usage.go; lists and usage reports filter).
				"group": {Name: "group", AllowMissing: true, Indexer: sharedString(func(i *structs.Instance) string { return i.InstanceGroup })},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.InstanceSnapshot,
		table:      TableInstances,
		newRecord:  func() any { return new(structs.Instance) },
		canonical:  func(rec any) { internInstance(rec.(*structs.Instance)) },
	})
}

// UpsertInstance creates or replaces an instance at index.
func (s *StateStore) UpsertInstance(index uint64, inst *structs.Instance) error {
	txn := s.writeTxn()
	defer txn.Abort()
	c := inst.Copy()
	old, err := first[*structs.Instance](txn, nil, TableInstances, "id", c.ID)
	if err != nil {
		return err
	}
	c.CreateIndex, c.ModifyIndex = index, index
	if old != nil {
		c.CreateIndex = old.CreateIndex
	}
	if err := replaceInstance(txn, old, c); err != nil {
		return err
	}
	return commitAt(txn, index, TableInstances)
}

// DeleteInstance removes an instance at index.
func (s *StateStore) DeleteInstance(index uint64, id string) error {
	txn := s.writeTxn()
	defer txn.Abort()
	old, err := first[*structs.Instance](txn, nil, TableInstances, "id", id)
	if err != nil {
		return err
	}
	if old == nil {
		return structs.Errorf(structs.KindNotFound, "instance %s not found", keyString([]any{id}))
	}
	if err := removeInstance(txn, old); err != nil {
		return err
	}
	return commitAt(txn, index, TableInstances)
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
		return s.createInstances(index, &e) // decoded here: its instances are ours to keep
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

// CreateInstances commits new instances with their evaluation; it
// stores copies of e's instances.
func (s *StateStore) CreateInstances(index uint64, e *structs.InstanceCreateEntry) error {
	return s.createInstances(index, ownCreate(e))
}

// ownCreate returns e with copies of its instances, for a caller that
// keeps its own: createInstancesTxn stores the instances it is given.
// A freshly decoded entry needs none, which spares every created
// instance a copy (and the heap the garbage of one).
func ownCreate(e *structs.InstanceCreateEntry) *structs.InstanceCreateEntry {
	c := *e
	c.Instances = make([]*structs.Instance, len(e.Instances))
	for i, inst := range e.Instances {
		c.Instances[i] = inst.Copy()
	}
	return &c
}

func (s *StateStore) createInstances(index uint64, e *structs.InstanceCreateEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	tables, err := s.createInstancesTxn(txn, index, e)
	if err != nil {
		return err
	}
	return commitAt(txn, index, tables...)
}

// createInstancesTxn writes a create's instances, actions, networking
// and evaluation in txn and returns the tables it changed. It stores
// e's instances themselves (see ownCreate); writing the same entry
// again after an aborted transaction is harmless.
func (s *StateStore) createInstancesTxn(txn *memdb.Txn, index uint64, e *structs.InstanceCreateEntry) ([]string, error) {
	// A retried create (same idempotency key) writes nothing and answers
	// the first one (create_requests.go).
	if err := createReplay(txn, e); err != nil {
		return nil, err
	}
	if err := admitCreate(txn, index, e); err != nil {
		return nil, err
	}
	// Before the instances are stored: the attach fills in their block
	// devices' guest devices and files.
	made, err := createBuildVolumes(txn, index, e)
	if err != nil {
		return nil, err
	}
	attached, err := attachBootVolumes(txn, index, e.CreatedAt, e.Instances)
	if err != nil {
		return nil, err
	}
	olds, err := storedVersions(txn, e.Instances)
	if err != nil {
		return nil, err
	}
	for i, c := range e.Instances {
		if c.Flavor == nil {
			c.Flavor = e.Flavor
		}
		c.CreateIndex, c.ModifyIndex = index, index
		if err := replaceInstance(txn, olds[i], c); err != nil {
			return nil, err
		}
		if e.RequestID != "" {
			err := storeAction(txn, index, structs.NewInstanceAction(structs.InstanceAction{
				RequestID: e.RequestID, InstanceID: c.ID, Action: "create", ProjectID: c.ProjectID, UserID: c.UserID,
				StartTime: e.CreatedAt,
			}, structs.InstanceActionEvent{Event: evBuild, StartTime: e.CreatedAt}))
			if err != nil {
				return nil, err
			}
		}
	}
	if err := applyNetChanges(txn, index, e.CreatedAt, e.Network); err != nil {
		return nil, err
	}
	tables := []string{TableInstances, TableInstanceActions}
	if attached || made {
		tables = append(tables, TableVolumes)
	}
	if made {
		b := &volumeBuild{s: s, txn: txn, index: index, at: e.CreatedAt}
		if err := b.startBuilds(e.Instances); err != nil {
			return nil, err
		}
		tables = append(tables, TableEvals)
	}
	if e.Eval != nil {
		ev := e.Eval.Copy()
		shareInstanceIDs(ev, e.Instances)
		internEval(ev)
		ev.CreateIndex, ev.ModifyIndex = index, index
		if err := txn.Insert(TableEvals, ev); err != nil {
			return nil, fmt.Errorf("insert eval %s: %w", ev.ID, err)
		}
		s.announceEvals(txn, ev)
		tables = append(tables, TableEvals)
	}
	recorded, err := recordCreateRequest(txn, index, e)
	if err != nil {
		return nil, err
	}
	return append(tables, recorded...), nil
}

// DeleteInstances deletes instances, whatever they are doing: a copy
// on an up host is destroyed by its agent first (the instance is purged
// when the last one reports gone); a copy on a down host, held for a
// move, or failed is dropped at once; an instance with nothing left is
// purged now. Purge instances are purged at once whatever their
// allocations (the leader found their host down; an agent that returns
// destroys what it no longer has an allocation for).
func (s *StateStore) DeleteInstances(index uint64, e *structs.InstanceDeleteEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	t := &taskTxn{txn: txn, index: index, at: e.UpdatedAt, hb: newHostBatch()}
	for _, id := range e.Deleting {
		if err := t.deleteInstance(id, e, false); err != nil {
			return err
		}
	}
	for _, id := range e.Purge {
		if err := t.deleteInstance(id, e, true); err != nil {
			return err
		}
	}
	if err := t.hb.flush(txn, index); err != nil {
		return err
	}
	return commitAt(txn, index, taskTables...)
}

func (t *taskTxn) deleteInstance(id string, e *structs.InstanceDeleteEntry, force bool) error {
	inst, err := t.instance(id)
	if err != nil || inst == nil {
		return err
	}
	inst = inst.Copy()
	if e.RequestID != "" {
		err := storeAction(t.txn, t.index, structs.NewInstanceAction(structs.InstanceAction{
			RequestID: e.RequestID, InstanceID: id, Action: "delete", ProjectID: inst.ProjectID, UserID: e.UserID,
			StartTime: e.UpdatedAt,
		}, structs.InstanceActionEvent{Event: evTerminate, StartTime: e.UpdatedAt, HostID: inst.HostID}))
		if err != nil {
			return err
		}
	}
	if inst.Task != nil {
		if err := t.finishEvent(inst, inst.Task.RequestID, "the instance was deleted"); err != nil {
			return err
		}
		if err := t.setMigration(inst.Task, structs.MigrationError, nil); err != nil {
			return err
		}
	}
	if inst.Resize != nil {
		if err := setMigration(t.txn, t.index, inst.Resize.MigrationID, structs.MigrationError, t.at, nil); err != nil {
			return err
		}
	}
	if force {
		return purgeInstance(t.txn, t.index, id, t.hb, t.at)
	}
	allocs, err := allocsOfInstance(t.txn, id)
	if err != nil {
		return err
	}
	waiting := false
	for _, a := range allocs {
		if a.DesiredState == structs.AllocDesiredDeleted && !a.Terminal() {
			up, err := t.hostUp(a.HostID)
			if err != nil {
				return err
			}
			if up {
				waiting = true // already being destroyed
				continue
			}
		}
		if err := t.release(a); err != nil {
			return err
		}
		if up, err := t.hostUp(a.HostID); err != nil {
			return err
		} else if up && a.DesiredState != structs.AllocDesiredHeld && !a.Terminal() {
			waiting = true
		}
	}
	if !waiting {
		return purgeInstance(t.txn, t.index, id, t.hb, t.at)
	}
	inst.Task, inst.Resize, inst.TaskState = nil, nil, structs.TaskDeleting
	return t.putInstance(inst)
}

// purgeInstance removes an instance and its allocations, freeing usage.
func purgeInstance(txn *memdb.Txn, index uint64, id string, hb *hostBatch, at int64) error {
	allocs, err := allocsOfInstance(txn, id)
	if err != nil {
		return err
	}
	for _, a := range allocs {
		if err := deleteAlloc(txn, a, hb); err != nil {
			return err
		}
	}
	if err := releaseInstancePorts(txn, index, at, id); err != nil {
		return err
	}
	if err := releaseInstanceVolumes(txn, index, at, id); err != nil {
		return err
	}
	acts, err := actionsOfInstance(txn, nil, id)
	if err != nil {
		return err
	}
	for _, act := range acts {
		if act.Action == "delete" {
			if err := finishEvent(txn, index, id, act.RequestID, "", at); err != nil {
				return err
			}
		}
	}
	raw, err := txn.First(TableInstances, "id", id)
	if err != nil {
		return fmt.Errorf("instance lookup %s: %w", id, err)
	}
	if raw != nil {
		if err := recordDeletedUsage(txn, index, raw.(*structs.Instance), at); err != nil {
			return err
		}
		if err := removeInstance(txn, raw.(*structs.Instance)); err != nil {
			return err
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
