package fsm

import (
	"fmt"
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableInstanceUsages holds the usage of deleted instances.
const TableInstanceUsages = "instance_usages"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableInstanceUsages,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("InstanceID"),
				"project": {Name: "project", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
				// By deletion time, for the retention purge
				// (instance_purge.go).
				deletedIndex: {Name: deletedIndex, Indexer: deletedAtIndexer{}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.InstanceUsageSnapshot,
		table:      TableInstanceUsages,
		newRecord:  func() any { return new(structs.InstanceUsage) },
	})
}

// DeletedUsages lists the usage records of deleted instances, all or one
// project's.
func (s *StateStore) DeletedUsages(ws memdb.WatchSet, projectID string) ([]*structs.InstanceUsage, error) {
	if projectID != "" {
		return list[*structs.InstanceUsage](s.ReadTxn(), ws, TableInstanceUsages, "project", projectID)
	}
	return list[*structs.InstanceUsage](s.ReadTxn(), ws, TableInstanceUsages)
}

// UsageSources reads, from one snapshot, what a usage report covers: the
// live instances and the usage records of deleted ones, all or one
// project's, each by id, so that an instance purged meanwhile is in
// exactly one of the lists. index is the later of the two tables'.
func (s *StateStore) UsageSources(ws memdb.WatchSet, projectID string) (live []*structs.Instance, deleted []*structs.InstanceUsage, index uint64, err error) {
	txn := s.ReadTxn()
	for _, table := range []string{TableInstances, TableInstanceUsages} {
		raw, err := txn.First(tableIndex, "id", table)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("index of %s: %w", table, err)
		}
		if raw != nil {
			index = max(index, raw.(*structs.IndexEntry).Value)
		}
	}
	var by []any
	if projectID != "" {
		by = []any{"project", projectID}
	}
	// Instances have no index by project (see instances.go): a report
	// filters them all.
	if live, err = list[*structs.Instance](txn, ws, TableInstances); err != nil {
		return nil, nil, 0, err
	}
	if projectID != "" {
		live = slices.DeleteFunc(live, func(i *structs.Instance) bool { return i.ProjectID != projectID })
	}
	if deleted, err = list[*structs.InstanceUsage](txn, ws, TableInstanceUsages, by...); err != nil {
		return nil, nil, 0, err
	}
	return live, deleted, index, nil
}

// recordDeletedUsage keeps what a deleted instance used, at the entry
// that purged it.
func recordDeletedUsage(txn *memdb.Txn, index uint64, inst *structs.Instance, at int64) error {
	u := &structs.InstanceUsage{
		InstanceID: inst.ID, Name: inst.Name, ProjectID: inst.ProjectID, UserID: inst.UserID,
		State: inst.VMState, CreatedAt: inst.CreatedAt, DeletedAt: at, CreateIndex: index, ModifyIndex: index,
	}
	if f := inst.Flavor; f != nil {
		u.FlavorName, u.VCPUs, u.MemoryMB, u.LocalGB = f.Name, f.VCPUs, f.MemoryMB, f.RootGB+f.EphemeralGB
	}
	if err := txn.Insert(TableInstanceUsages, u); err != nil {
		return fmt.Errorf("record usage of %s: %w", inst.ID, err)
	}
	return nil
}
