package fsm

import (
	"cmp"
	"fmt"
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableMigrations is the name of the table, for Index and blocking
// queries.
const TableMigrations = "migrations"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableMigrations,
			Indexes: map[string]*memdb.IndexSchema{
				"id":       {Name: "id", Unique: true, Indexer: &memdb.UintFieldIndex{Field: "ID"}},
				"instance": {Name: "instance", Indexer: &memdb.StringFieldIndex{Field: "InstanceID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.MigrationSnapshot,
		table:      TableMigrations,
		newRecord:  func() any { return new(structs.Migration) },
	})
}

// Migrations lists every migration by id.
func (s *StateStore) Migrations(ws memdb.WatchSet) ([]*structs.Migration, error) {
	return byID(list[*structs.Migration](s.ReadTxn(), ws, TableMigrations))
}

// MigrationsByInstance lists an instance's migrations by id.
func (s *StateStore) MigrationsByInstance(ws memdb.WatchSet, instanceID string) ([]*structs.Migration, error) {
	return byID(list[*structs.Migration](s.ReadTxn(), ws, TableMigrations, "instance", instanceID))
}

// byID sorts migrations by id: memdb's uint index is varint-encoded,
// which does not iterate in numeric order.
func byID(ms []*structs.Migration, err error) ([]*structs.Migration, error) {
	slices.SortFunc(ms, func(a, b *structs.Migration) int { return cmp.Compare(a.ID, b.ID) })
	return ms, err
}

// MigrationByID reads one migration or nil.
func (s *StateStore) MigrationByID(ws memdb.WatchSet, id uint64) (*structs.Migration, error) {
	return first[*structs.Migration](s.ReadTxn(), ws, TableMigrations, "id", id)
}

// insertMigration records a new migration; its id is the entry's index.
func insertMigration(txn *memdb.Txn, index uint64, m *structs.Migration) (uint64, error) {
	c := m.Copy()
	c.ID, c.CreateIndex, c.ModifyIndex = index, index, index
	if err := txn.Insert(TableMigrations, c); err != nil {
		return 0, fmt.Errorf("insert migration: %w", err)
	}
	return c.ID, nil
}

// setMigration changes a migration's status (and whatever fn sets).
func setMigration(txn *memdb.Txn, index uint64, id uint64, status string, at int64, fn func(m *structs.Migration)) error {
	if id == 0 {
		return nil
	}
	raw, err := txn.First(TableMigrations, "id", id)
	if err != nil {
		return fmt.Errorf("migration lookup %d: %w", id, err)
	}
	if raw == nil {
		return nil
	}
	m := raw.(*structs.Migration).Copy()
	m.Status, m.UpdatedAt, m.ModifyIndex = status, at, index
	if fn != nil {
		fn(m)
	}
	if err := txn.Insert(TableMigrations, m); err != nil {
		return fmt.Errorf("update migration %d: %w", id, err)
	}
	return nil
}
