package fsm

import (
	"fmt"

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
