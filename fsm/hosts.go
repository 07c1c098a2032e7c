package fsm

import (
	"bytes"
	"fmt"

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

func init() {
	registerApply(structs.HostRegisterType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.HostRegisterEntry
		if err := decodeBody(structs.HostRegisterType, body, &e); err != nil {
			return err
		}
		return s.RegisterHost(index, e.Host)
	})
	registerApply(structs.HostStatusUpdateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.HostStatusUpdateEntry
		if err := decodeBody(structs.HostStatusUpdateType, body, &e); err != nil {
			return err
		}
		return s.UpdateHostStatus(index, &e)
	})
	registerApply(structs.HostEnabledUpdateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.HostEnabledUpdateEntry
		if err := decodeBody(structs.HostEnabledUpdateType, body, &e); err != nil {
			return err
		}
		txn := s.writeTxn()
		defer txn.Abort()
		raw, err := txn.First(TableHosts, "id", e.HostID)
		if err != nil {
			return err
		}
		if raw == nil {
			return structs.Errorf(structs.KindNotFound, "host %q not found", e.HostID)
		}
		if err := updateHost(txn, index, e.HostID, func(h *structs.Host) {
			h.Enabled, h.DisabledReason, h.Drain = e.Enabled, e.Reason, e.Drain
			if e.Enabled {
				h.DisabledReason = ""
			}
		}); err != nil {
			return err
		}
		return commitAt(txn, index, TableHosts)
	})
}

// RegisterHost stores what an agent fingerprinted. What the servers own
// (usage, build failures, the operator's enable/disable) survives a
// re-registration; a registering host is alive, so it is up.
func (s *StateStore) RegisterHost(index uint64, h *structs.Host) error {
	if h == nil {
		return structs.Errorf(structs.KindInvalid, "host register without a host")
	}
	txn := s.writeTxn()
	defer txn.Abort()
	c := h.Copy()
	raw, err := txn.First(TableHosts, "id", c.ID)
	if err != nil {
		return fmt.Errorf("host lookup %s: %w", c.ID, err)
	}
	c.Status = structs.HostStatusUp
	c.CreateIndex = index
	if raw != nil {
		old := raw.(*structs.Host)
		// The endpoint checked the secret; this keeps two racing first
		// registrations from both claiming the host.
		if len(old.SecretHash) > 0 && !bytes.Equal(old.SecretHash, c.SecretHash) {
			return structs.Errorf(structs.KindPermission, "host %s is registered with another node secret", c.ID)
		}
		c.CreateIndex = old.CreateIndex
		c.Usage = copyUsage(old.Usage)
		c.BuildFailures = old.BuildFailures
		c.Enabled, c.DisabledReason, c.Drain, c.ForcedDown = old.Enabled, old.DisabledReason, old.Drain, old.ForcedDown
	}
	c.ModifyIndex = index
	if err := txn.Insert(TableHosts, c); err != nil {
		return fmt.Errorf("insert host %s: %w", c.ID, err)
	}
	return commitAt(txn, index, TableHosts)
}

// UpdateHostStatus records hosts going up or down. Instances on a host
// that went down show power state NOSTATE until its agent reconciles.
func (s *StateStore) UpdateHostStatus(index uint64, e *structs.HostStatusUpdateEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	touchedInstances := false
	for _, id := range e.HostIDs {
		if err := updateHost(txn, index, id, func(h *structs.Host) {
			h.Status, h.StatusUpdatedAt = e.Status, e.UpdatedAt
		}); err != nil {
			return err
		}
		if e.Status != structs.HostStatusDown {
			continue
		}
		insts, err := list[*structs.Instance](txn, nil, TableInstances, "host", id)
		if err != nil {
			return err
		}
		for _, inst := range insts {
			touchedInstances = true
			if err := updateInstance(txn, index, inst.ID, func(i *structs.Instance) {
				i.PowerState = structs.PowerNoState
				i.UpdatedAt = e.UpdatedAt
			}); err != nil {
				return err
			}
		}
	}
	tables := []string{TableHosts}
	if touchedInstances {
		tables = append(tables, TableInstances)
	}
	return commitAt(txn, index, tables...)
}

// HostByName returns the first host with that name, or nil.
func (s *StateStore) HostByName(ws memdb.WatchSet, name string) (*structs.Host, error) {
	return first[*structs.Host](s.ReadTxn(), ws, TableHosts, "name", name)
}

func copyUsage(m map[string]int64) map[string]int64 {
	c := make(map[string]int64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
