package fsm

import (
	"fmt"
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableInstanceActions is the name of the table, for Index and blocking
// queries.
const TableInstanceActions = "instance_actions"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableInstanceActions,
			Indexes: map[string]*memdb.IndexSchema{
				// An instance's actions are a prefix of this index
				// (actionsOfInstance): an index by instance alone would
				// cost every action a second radix entry.
				"id": {Name: "id", Unique: true, Indexer: &pairKey[*structs.InstanceAction]{
					first:  func(a *structs.InstanceAction) string { return a.InstanceID },
					second: func(a *structs.InstanceAction) string { return a.RequestID },
				}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.InstanceActionSnapshot,
		table:      TableInstanceActions,
		newRecord:  func() any { return new(structs.InstanceAction) },
		canonical:  func(rec any) { internAction(rec.(*structs.InstanceAction)) },
	})
}

// actionsOfInstance lists an instance's actions by request id: the
// prefix (instance id, "") of the id index is the instance id and its
// terminator, so it matches no other instance's.
func actionsOfInstance(txn *memdb.Txn, ws memdb.WatchSet, instanceID string) ([]*structs.InstanceAction, error) {
	return list[*structs.InstanceAction](txn, ws, TableInstanceActions, "id_prefix", instanceID, "")
}

// InstanceActions lists an instance's actions, newest first, as Nova
// lists them.
func (s *StateStore) InstanceActions(ws memdb.WatchSet, instanceID string) ([]*structs.InstanceAction, error) {
	out, err := actionsOfInstance(s.ReadTxn(), ws, instanceID)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b *structs.InstanceAction) int {
		switch {
		case a.CreateIndex != b.CreateIndex:
			return int(b.CreateIndex) - int(a.CreateIndex)
		case a.StartTime > b.StartTime:
			return -1
		case a.StartTime < b.StartTime:
			return 1
		}
		return 0
	})
	return out, nil
}

// InstanceAction reads one action or nil.
func (s *StateStore) InstanceActionByID(ws memdb.WatchSet, instanceID, requestID string) (*structs.InstanceAction, error) {
	return first[*structs.InstanceAction](s.ReadTxn(), ws, TableInstanceActions, "id", instanceID, requestID)
}

// insertAction records a new action at index; it stores a copy of a.
func insertAction(txn *memdb.Txn, index uint64, a *structs.InstanceAction) error {
	return storeAction(txn, index, a.Copy())
}

// storeAction records a new action at index, storing c itself: the
// caller built it for the store and keeps no reference.
func storeAction(txn *memdb.Txn, index uint64, c *structs.InstanceAction) error {
	internAction(c)
	c.CreateIndex, c.ModifyIndex = index, index
	if c.UpdatedAt == 0 {
		c.UpdatedAt = c.StartTime
	}
	if err := txn.Insert(TableInstanceActions, c); err != nil {
		return fmt.Errorf("insert instance action %s: %w", c.RequestID, err)
	}
	return nil
}

// updateAction applies fn to a copy of an action; a missing one (an
// entry from before actions were recorded) is skipped.
func updateAction(txn *memdb.Txn, index uint64, instanceID, requestID string, fn func(a *structs.InstanceAction)) error {
	if requestID == "" {
		return nil
	}
	raw, err := txn.First(TableInstanceActions, "id", instanceID, requestID)
	if err != nil {
		return fmt.Errorf("instance action lookup %s: %w", requestID, err)
	}
	if raw == nil {
		return nil
	}
	return changeAction(txn, index, raw.(*structs.InstanceAction), fn)
}

// changeAction stores a copy of the stored action old as fn changes it.
func changeAction(txn *memdb.Txn, index uint64, old *structs.InstanceAction, fn func(a *structs.InstanceAction)) error {
	a := old.Copy()
	fn(a)
	internAction(a)
	a.ModifyIndex = index
	if err := txn.Insert(TableInstanceActions, a); err != nil {
		return fmt.Errorf("update instance action %s: %w", old.RequestID, err)
	}
	return nil
}

// startEvent opens an event of an action.
func startEvent(txn *memdb.Txn, index uint64, instanceID, requestID, event, hostID string, at int64) error {
	return updateAction(txn, index, instanceID, requestID, func(a *structs.InstanceAction) {
		a.Events = append(a.Events, &structs.InstanceActionEvent{Event: event, StartTime: at, HostID: hostID})
		a.UpdatedAt = at
	})
}

// finishEvent closes the last open event of an action with its result
// (an empty errText is success); a failed event marks the action "Error"
// as Nova does.
func finishEvent(txn *memdb.Txn, index uint64, instanceID, requestID, errText string, at int64) error {
	return updateAction(txn, index, instanceID, requestID, finishEventFn(errText, at))
}

// finishEventFn closes an action's open event: a success when errText
// is empty, else an error.
func finishEventFn(errText string, at int64) func(a *structs.InstanceAction) {
	return func(a *structs.InstanceAction) {
		for i := len(a.Events) - 1; i >= 0; i-- {
			ev := a.Events[i]
			if ev.Result != "" {
				continue
			}
			ev.FinishTime, ev.Result = at, structs.EventSuccess
			if errText != "" {
				ev.Result, ev.Details = structs.EventError, errText
				a.Message = "Error"
			}
			break
		}
		a.UpdatedAt = at
	}
}
