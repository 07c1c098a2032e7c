package fsm

import (
	"fmt"
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

// An operator's host changes beyond enabling: forcing a host down
// (fencing it before evacuation, as Nova's forced_down) and removing a
// dead, empty host from the state (Nova's service delete).

func init() {
	registerApply(structs.HostForceDownType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.HostForceDownEntry
		if err := decodeBody(structs.HostForceDownType, body, &e); err != nil {
			return err
		}
		return s.ForceHostDown(index, &e)
	})
	registerApply(structs.HostDeregisterType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.HostDeregisterEntry
		if err := decodeBody(structs.HostDeregisterType, body, &e); err != nil {
			return err
		}
		return s.DeregisterHost(index, &e)
	})
}

// ForceHostDown sets or clears a host's ForcedDown.
func (s *StateStore) ForceHostDown(index uint64, e *structs.HostForceDownEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	h, err := first[*structs.Host](txn, nil, TableHosts, "id", e.HostID)
	if err != nil {
		return err
	}
	if h == nil {
		return structs.Errorf(structs.KindNotFound, "host %q not found", e.HostID)
	}
	if err := updateHost(txn, index, h.ID, func(h *structs.Host) { h.ForcedDown = e.ForcedDown }); err != nil {
		return err
	}
	return commitAt(txn, index, TableHosts)
}

// DeregisterHost removes a host that is down (or forced down) and has
// no allocations, and takes it out of every aggregate.
func (s *StateStore) DeregisterHost(index uint64, e *structs.HostDeregisterEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	h, err := first[*structs.Host](txn, nil, TableHosts, "id", e.HostID)
	if err != nil {
		return err
	}
	if h == nil {
		return structs.Errorf(structs.KindNotFound, "host %q not found", e.HostID)
	}
	if h.Up() {
		return structs.Errorf(structs.KindConflict, "Unable to delete compute service %s: it is up. Stop its agent, or force it down, first.", h.Name)
	}
	allocs, err := list[*structs.Allocation](txn, nil, TableAllocations, "host", h.ID)
	if err != nil {
		return err
	}
	if len(allocs) > 0 {
		return structs.Errorf(structs.KindConflict, "Unable to delete compute service that is hosting instances. Migrate or delete the instances first.")
	}
	// Aggregates list hosts by id.
	aggs, err := list[*structs.Aggregate](txn, nil, TableAggregates, "host", h.ID)
	if err != nil {
		return err
	}
	for _, a := range aggs {
		c := a.Copy()
		c.Hosts = slices.DeleteFunc(c.Hosts, func(id string) bool { return id == h.ID })
		c.ModifyIndex = index
		if err := txn.Insert(TableAggregates, c); err != nil {
			return fmt.Errorf("update aggregate %s: %w", c.Name, err)
		}
	}
	if err := txn.Delete(TableHosts, h); err != nil {
		return fmt.Errorf("delete host %s: %w", h.ID, err)
	}
	return commitAt(txn, index, TableHosts, TableAggregates)
}
