package fsm

import (
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableEvals is the name of the table, for Index and blocking queries.
const TableEvals = "evals"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableEvals,
			Indexes: map[string]*memdb.IndexSchema{
				"id":     {Name: "id", Unique: true, Indexer: uniqueString(func(e *structs.Evaluation) string { return e.ID })},
				"status": {Name: "status", Indexer: sharedString(func(e *structs.Evaluation) string { return e.Status })},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.EvalSnapshot,
		table:      TableEvals,
		newRecord:  func() any { return new(structs.Evaluation) },
		canonical:  func(rec any) { internEval(rec.(*structs.Evaluation)) },
	})
}

// UpsertEval creates or replaces an evaluation at index.
func (s *StateStore) UpsertEval(index uint64, e *structs.Evaluation) error {
	c := e.Copy()
	return s.upsertOne(index, TableEvals, c,
		func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
		func(o any) uint64 { return o.(*structs.Evaluation).CreateIndex }, c.ID)
}

// EvalByID returns an evaluation or nil.
func (s *StateStore) EvalByID(ws memdb.WatchSet, id string) (*structs.Evaluation, error) {
	return first[*structs.Evaluation](s.ReadTxn(), ws, TableEvals, "id", id)
}

// EvalsByStatus lists evaluations in a status (pending ones seed the
// broker on a leadership change).
func (s *StateStore) EvalsByStatus(ws memdb.WatchSet, status string) ([]*structs.Evaluation, error) {
	return list[*structs.Evaluation](s.ReadTxn(), ws, TableEvals, "status", status)
}

func init() {
	registerApply(structs.EvalUpdateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.EvalUpdateEntry
		if err := decodeBody(structs.EvalUpdateType, body, &e); err != nil {
			return err
		}
		txn := s.writeTxn()
		defer txn.Abort()
		if err := upsertEvals(txn, index, e.Evals); err != nil {
			return err
		}
		return commitAt(txn, index, TableEvals)
	})
}

func upsertEvals(txn *memdb.Txn, index uint64, evals []*structs.Evaluation) error {
	for _, ev := range evals {
		c := ev.Copy()
		internEval(c)
		if err := upsert(txn, TableEvals, index, c,
			func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
			func(o any) uint64 {
				old := o.(*structs.Evaluation)
				// A status update names the same instances: share the
				// stored list (never changed in place) and its strings.
				if slices.Equal(old.InstanceIDs, c.InstanceIDs) {
					c.ID, c.InstanceIDs = old.ID, old.InstanceIDs
				}
				return old.CreateIndex
			}, c.ID); err != nil {
			return err
		}
	}
	return nil
}

// Evals lists every evaluation by id.
func (s *StateStore) Evals(ws memdb.WatchSet) ([]*structs.Evaluation, error) {
	return list[*structs.Evaluation](s.ReadTxn(), ws, TableEvals)
}
