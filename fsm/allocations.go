package fsm

import (
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

// UpsertAllocation creates or replaces an allocation at index.
func (s *StateStore) UpsertAllocation(index uint64, a *structs.Allocation) error {
	c := a.Copy()
	return s.upsertOne(index, TableAllocations, c,
		func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
		func(o any) uint64 { return o.(*structs.Allocation).CreateIndex }, c.ID)
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
