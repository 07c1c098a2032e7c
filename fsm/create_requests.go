package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableCreateRequests is the name of the table of creates by idempotency
// key, for Index and blocking queries.
const TableCreateRequests = "create_requests"

// A create that carries an idempotency key (InstanceCreateEntry's
// Idempotency) leaves a record here, in the transaction that creates its
// instances. A later create with the same project and key — a client's
// or an agent's retry after an answer was lost to a leader election —
// finds it and creates nothing: its answer is the record (a
// *structs.CreateReplay). Records live until a leader-driven purge entry
// whose Before, not the FSM's clock, says which are old.

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name:    TableCreateRequests,
			Indexes: map[string]*memdb.IndexSchema{"id": idIndex("ID")},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.CreateRequestSnapshot,
		table:      TableCreateRequests,
		newRecord:  func() any { return new(structs.CreateRequest) },
	})
	registerApply(structs.CreateRequestPurgeType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.CreateRequestPurgeEntry
		if err := decodeBody(structs.CreateRequestPurgeType, body, &e); err != nil {
			return err
		}
		_, err := s.PurgeCreateRequests(index, e.Before)
		return err
	})
}

// createProject is the project a create's key belongs to: its
// instances' (one create is always one project's).
func createProject(e *structs.InstanceCreateEntry) string {
	for _, inst := range e.Instances {
		if inst != nil {
			return inst.ProjectID
		}
	}
	return ""
}

// createReplay returns a *structs.CreateReplay when e's idempotency key
// was already used in its project, a conflict when it was used for a
// different request, and nil when e is new (or has no key).
func createReplay(txn *memdb.Txn, e *structs.InstanceCreateEntry) error {
	if e.Idempotency == nil || e.Idempotency.Key == "" {
		return nil
	}
	id := structs.CreateRequestID(createProject(e), e.Idempotency.Key)
	rec, err := first[*structs.CreateRequest](txn, nil, TableCreateRequests, "id", id)
	if err != nil || rec == nil {
		return err
	}
	if rec.Fingerprint != e.Idempotency.Fingerprint {
		return structs.Errorf(structs.KindConflict,
			"Idempotency-Key %q was already used for a different request", e.Idempotency.Key)
	}
	return &structs.CreateReplay{Request: rec}
}

// recordCreateRequest stores e's key with the instances and evaluation
// it created, and returns the tables it changed.
func recordCreateRequest(txn *memdb.Txn, index uint64, e *structs.InstanceCreateEntry) ([]string, error) {
	if e.Idempotency == nil || e.Idempotency.Key == "" {
		return nil, nil
	}
	project := createProject(e)
	rec := &structs.CreateRequest{
		ID: structs.CreateRequestID(project, e.Idempotency.Key), ProjectID: project, Key: e.Idempotency.Key,
		Fingerprint: e.Idempotency.Fingerprint, CreatedAt: e.CreatedAt, CreateIndex: index, ModifyIndex: index,
	}
	for _, inst := range e.Instances {
		rec.InstanceIDs = append(rec.InstanceIDs, inst.ID)
		rec.ReservationID = inst.ReservationID
	}
	if e.Eval != nil {
		rec.EvalID = e.Eval.ID
	}
	if err := txn.Insert(TableCreateRequests, rec); err != nil {
		return nil, fmt.Errorf("record create request %q: %w", e.Idempotency.Key, err)
	}
	return []string{TableCreateRequests}, nil
}

// CreateRequestByKey returns the record of a project's create by
// idempotency key, or nil.
func (s *StateStore) CreateRequestByKey(ws memdb.WatchSet, projectID, key string) (*structs.CreateRequest, error) {
	return first[*structs.CreateRequest](s.ReadTxn(), ws, TableCreateRequests, "id", structs.CreateRequestID(projectID, key))
}

// CreateRequests lists every create request record.
func (s *StateStore) CreateRequests(ws memdb.WatchSet) ([]*structs.CreateRequest, error) {
	return list[*structs.CreateRequest](s.ReadTxn(), ws, TableCreateRequests)
}

// PurgeCreateRequests removes the create and task request records
// created before before and returns how many it removed. It changes
// nothing (and no index) when none is that old.
func (s *StateStore) PurgeCreateRequests(index uint64, before int64) (int, error) {
	txn := s.writeTxn()
	defer txn.Abort()
	recs, err := list[*structs.CreateRequest](txn, nil, TableCreateRequests)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range recs {
		if r.CreatedAt >= before {
			continue
		}
		if err := txn.Delete(TableCreateRequests, r); err != nil {
			return 0, fmt.Errorf("purge create request %q: %w", r.Key, err)
		}
		n++
	}
	var tables []string
	if n > 0 {
		tables = append(tables, TableCreateRequests)
	}
	tasks, err := purgeTaskRequests(txn, before)
	if err != nil {
		return 0, err
	}
	if tasks > 0 {
		tables = append(tables, TableTaskRequests)
	}
	if len(tables) == 0 {
		return 0, nil
	}
	return n + tasks, commitAt(txn, index, tables...)
}
