package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableTaskRequests is the name of the table of task submissions by
// idempotency key, for Index and blocking queries.
const TableTaskRequests = "task_requests"

// A task that carries an idempotency key (InstanceTaskEntry's
// Idempotency) leaves a record here, in the transaction that starts it.
// A later task with the same project and key — a client's or an agent's
// retry after an answer was lost to a leader election — finds it and
// changes nothing: its answer is a *TaskAlreadyApplied holding the
// record. The same key for a different task is a conflict. Records are
// purged with the create requests (CreateRequestPurgeEntry), by the
// entry's cut-off, not the FSM's clock.

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name:    TableTaskRequests,
			Indexes: map[string]*memdb.IndexSchema{"id": idIndex("ID")},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.TaskRequestSnapshot,
		table:      TableTaskRequests,
		newRecord:  func() any { return new(structs.TaskRequest) },
	})
}

// taskReplay returns a *TaskAlreadyApplied when e's idempotency key was
// already used in its project for the same task, a conflict when it was
// used for a different one, and nil when e is new (or has no key).
func taskReplay(txn *memdb.Txn, e *structs.InstanceTaskEntry) error {
	k := e.Idempotency
	if k == nil || k.Key == "" {
		return nil
	}
	rec, err := first[*structs.TaskRequest](txn, nil, TableTaskRequests, "id", structs.TaskRequestID(k.ProjectID, k.Key))
	if err != nil || rec == nil {
		return err
	}
	if rec.Fingerprint != k.Fingerprint {
		return structs.Errorf(structs.KindConflict,
			"Idempotency-Key %q was already used for a different request", k.Key)
	}
	return &TaskAlreadyApplied{Index: rec.CreateIndex, Request: rec}
}

// recordTaskRequest stores e's key with the action and migration it
// started, and returns the tables it changed.
func recordTaskRequest(txn *memdb.Txn, index uint64, e *structs.InstanceTaskEntry) ([]string, error) {
	k := e.Idempotency
	if k == nil || k.Key == "" {
		return nil, nil
	}
	rec := &structs.TaskRequest{
		ID: structs.TaskRequestID(k.ProjectID, k.Key), ProjectID: k.ProjectID, Key: k.Key, Fingerprint: k.Fingerprint,
		InstanceID: e.InstanceID, Op: e.Op, CreatedAt: e.UpdatedAt, CreateIndex: index, ModifyIndex: index,
	}
	if e.Action != nil {
		rec.RequestID = e.Action.RequestID
	}
	if e.Migration != nil {
		rec.MigrationID = index
	}
	if e.Op == structs.OpCreateImage || e.Op == structs.OpCreateBackup {
		rec.ImageID = e.ImageID
	}
	if err := txn.Insert(TableTaskRequests, rec); err != nil {
		return nil, fmt.Errorf("record task request %q: %w", k.Key, err)
	}
	return []string{TableTaskRequests}, nil
}

// TaskRequestByKey returns the record of a project's task by
// idempotency key, or nil.
func (s *StateStore) TaskRequestByKey(ws memdb.WatchSet, projectID, key string) (*structs.TaskRequest, error) {
	return first[*structs.TaskRequest](s.ReadTxn(), ws, TableTaskRequests, "id", structs.TaskRequestID(projectID, key))
}

// TaskRequests lists every task request record.
func (s *StateStore) TaskRequests(ws memdb.WatchSet) ([]*structs.TaskRequest, error) {
	return list[*structs.TaskRequest](s.ReadTxn(), ws, TableTaskRequests)
}

// purgeTaskRequests removes, in txn, the records created before before,
// and returns how many it removed.
func purgeTaskRequests(txn *memdb.Txn, before int64) (int, error) {
	recs, err := list[*structs.TaskRequest](txn, nil, TableTaskRequests)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range recs {
		if r.CreatedAt >= before {
			continue
		}
		if err := txn.Delete(TableTaskRequests, r); err != nil {
			return 0, fmt.Errorf("purge task request %q: %w", r.Key, err)
		}
		n++
	}
	return n, nil
}
