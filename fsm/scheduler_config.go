package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableSchedulerConfig holds at most one row: the operator's scheduler
// configuration.
const TableSchedulerConfig = "scheduler_config"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableSchedulerConfig,
			Indexes: map[string]*memdb.IndexSchema{
				// Every row has the same key: the table is a singleton.
				"id": {Name: "id", Unique: true, Indexer: &memdb.ConditionalIndex{
					Conditional: func(any) (bool, error) { return true, nil },
				}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.SchedulerConfigSnapshot,
		table:      TableSchedulerConfig,
		newRecord:  func() any { return new(structs.SchedulerConfiguration) },
	})
	registerApply(structs.SchedulerConfigSetType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.SchedulerSetConfigEntry
		if err := decodeBody(structs.SchedulerConfigSetType, body, &e); err != nil {
			return err
		}
		return s.SetSchedulerConfig(index, &e)
	})
}

// SetSchedulerConfig stores the operator's scheduler configuration. With
// CAS it only does so if the stored one is still at CheckIndex (0: none
// stored), and returns false otherwise.
func (s *StateStore) SetSchedulerConfig(index uint64, e *structs.SchedulerSetConfigEntry) any {
	if err := e.Config.Validate(); err != nil {
		return err
	}
	txn := s.writeTxn()
	defer txn.Abort()
	existing, err := first[*structs.SchedulerConfiguration](txn, nil, TableSchedulerConfig, "id")
	if err != nil {
		return err
	}
	if e.CAS {
		at := uint64(0)
		if existing != nil {
			at = existing.ModifyIndex
		}
		if at != e.CheckIndex {
			return false
		}
	}
	c := e.Config.Copy()
	c.CreateIndex, c.ModifyIndex = index, index
	if existing != nil {
		c.CreateIndex = existing.CreateIndex
	}
	if err := txn.Insert(TableSchedulerConfig, c); err != nil {
		return fmt.Errorf("store scheduler configuration: %w", err)
	}
	if err := commitAt(txn, index, TableSchedulerConfig); err != nil {
		return err
	}
	return true
}

// SchedulerConfig returns the operator's scheduler configuration, or nil
// when none was ever set.
func (s *StateStore) SchedulerConfig(ws memdb.WatchSet) (*structs.SchedulerConfiguration, error) {
	return first[*structs.SchedulerConfiguration](s.ReadTxn(), ws, TableSchedulerConfig, "id")
}
