package fsm

import (
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
				"id":       idIndex("ID"),
				"instance": {Name: "instance", Indexer: &memdb.StringFieldIndex{Field: "InstanceID"}},
				"status":   {Name: "status", Indexer: &memdb.StringFieldIndex{Field: "Status"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.EvalSnapshot,
		table:      TableEvals,
		newRecord:  func() any { return new(structs.Evaluation) },
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
