package fsm

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableInstances is the name of the table, for Index and blocking queries.
const TableInstances = "instances"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableInstances,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("ID"),
				"host":    {Name: "host", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "HostID"}},
				"project": {Name: "project", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.InstanceSnapshot,
		table:      TableInstances,
		newRecord:  func() any { return new(structs.Instance) },
	})
}

// UpsertInstance creates or replaces an instance at index.
func (s *StateStore) UpsertInstance(index uint64, inst *structs.Instance) error {
	txn := s.writeTxn()
	defer txn.Abort()
	c := inst.Copy()
	err := upsert(txn, TableInstances, index, c,
		func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
		func(o any) uint64 { return o.(*structs.Instance).CreateIndex }, c.ID)
	if err != nil {
		return err
	}
	return commitAt(txn, index, TableInstances)
}

// DeleteInstance removes an instance at index.
func (s *StateStore) DeleteInstance(index uint64, id string) error {
	return s.deleteOne(index, TableInstances, "instance", id)
}

// InstanceByID returns an instance or nil.
func (s *StateStore) InstanceByID(ws memdb.WatchSet, id string) (*structs.Instance, error) {
	return first[*structs.Instance](s.ReadTxn(), ws, TableInstances, "id", id)
}

// Instances lists every instance by id.
func (s *StateStore) Instances(ws memdb.WatchSet) ([]*structs.Instance, error) {
	return list[*structs.Instance](s.ReadTxn(), ws, TableInstances)
}

// InstancesByHost lists the instances placed on a host.
func (s *StateStore) InstancesByHost(ws memdb.WatchSet, hostID string) ([]*structs.Instance, error) {
	return list[*structs.Instance](s.ReadTxn(), ws, TableInstances, "host", hostID)
}
