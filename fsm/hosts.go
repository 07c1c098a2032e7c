package fsm

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableHosts is the name of the table, for Index and blocking queries.
const TableHosts = "hosts"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableHosts,
			Indexes: map[string]*memdb.IndexSchema{
				"id":   idIndex("ID"),
				"name": {Name: "name", Indexer: &memdb.StringFieldIndex{Field: "Name"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.HostSnapshot,
		table:      TableHosts,
		newRecord:  func() any { return new(structs.Host) },
	})
}

// UpsertHost registers or updates a host at index.
func (s *StateStore) UpsertHost(index uint64, h *structs.Host) error {
	c := h.Copy()
	return s.upsertOne(index, TableHosts, c,
		func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
		func(o any) uint64 { return o.(*structs.Host).CreateIndex }, c.ID)
}

// DeleteHost removes a host at index.
func (s *StateStore) DeleteHost(index uint64, id string) error {
	return s.deleteOne(index, TableHosts, "host", id)
}

// HostByID returns a host or nil.
func (s *StateStore) HostByID(ws memdb.WatchSet, id string) (*structs.Host, error) {
	return first[*structs.Host](s.ReadTxn(), ws, TableHosts, "id", id)
}

// Hosts lists every host by id.
func (s *StateStore) Hosts(ws memdb.WatchSet) ([]*structs.Host, error) {
	return list[*structs.Host](s.ReadTxn(), ws, TableHosts)
}
