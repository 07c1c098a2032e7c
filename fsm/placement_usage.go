package fsm

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// Placement's usage accounting (Nova's Placement service role): every
// allocation an entry inserts, replaces or deletes adds to or takes from
// its host's Usage in the same transaction, so a host's usage is always
// the sum of its allocations and the leader's placement check
// (server/placement.go) compares it with the inventories' capacity
// (structs/placement.go).

// hostBatch gathers what one entry changes on hosts through their
// allocations — usage and the agent's wake-up index — so each host is
// copied and written once per entry rather than once per allocation.
type hostBatch struct {
	usage map[string]map[string]int64
	bump  map[string]bool
}

func newHostBatch() *hostBatch {
	return &hostBatch{usage: map[string]map[string]int64{}, bump: map[string]bool{}}
}

// add records sign × res of usage on a host.
func (b *hostBatch) add(hostID string, res map[string]int64, sign int64) {
	u := b.usage[hostID]
	if u == nil {
		u = map[string]int64{}
		b.usage[hostID] = u
	}
	for class, n := range res {
		u[class] += sign * n
	}
}

// touch records that a host's agent has new work.
func (b *hostBatch) touch(hostID string) { b.bump[hostID] = true }

// flush writes the gathered changes, one host at a time in id order. A
// host deleted meanwhile is skipped: its usage went with it.
func (b *hostBatch) flush(txn *memdb.Txn, index uint64) error {
	ids := make([]string, 0, len(b.usage)+len(b.bump))
	for id := range b.usage {
		ids = append(ids, id)
	}
	for id := range b.bump {
		if _, ok := b.usage[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	// Every host is read before any is written: a read between two
	// writes would make the next write copy its path in the index
	// again (see storedVersions).
	stored := make([]*structs.Host, len(ids))
	for i, id := range ids {
		raw, err := txn.First(TableHosts, "id", id)
		if err != nil {
			return fmt.Errorf("host lookup %s: %w", id, err)
		}
		stored[i], _ = raw.(*structs.Host)
	}
	for i, id := range ids {
		old := stored[i]
		if old == nil {
			continue
		}
		// A shallow copy with a fresh Usage map: nothing else changes
		// here, and stored hosts are never modified in place, so the
		// copy may share its inventories, traits and attributes.
		h := *old
		h.Usage = make(map[string]int64, len(h.Usage)+len(b.usage[id]))
		for class, n := range old.Usage {
			h.Usage[class] = n
		}
		for class, n := range b.usage[id] {
			h.Usage[class] += n
			if h.Usage[class] <= 0 {
				delete(h.Usage, class)
			}
		}
		if b.bump[id] {
			h.AllocsIndex = index
		}
		h.ModifyIndex = index
		if err := txn.Insert(TableHosts, &h); err != nil {
			return fmt.Errorf("update host %s: %w", id, err)
		}
	}
	return nil
}

// updateHost applies fn to a copy of a host and stores it.
func updateHost(txn *memdb.Txn, index uint64, hostID string, fn func(h *structs.Host)) error {
	raw, err := txn.First(TableHosts, "id", hostID)
	if err != nil {
		return fmt.Errorf("host lookup %s: %w", hostID, err)
	}
	if raw == nil {
		return nil
	}
	h := raw.(*structs.Host).Copy()
	fn(h)
	h.ModifyIndex = index
	if err := txn.Insert(TableHosts, h); err != nil {
		return fmt.Errorf("update host %s: %w", hostID, err)
	}
	return nil
}

// updateInstance applies fn to a copy of an instance and stores it;
// a missing instance is skipped (it was deleted meanwhile).
func updateInstance(txn *memdb.Txn, index uint64, id string, fn func(i *structs.Instance)) error {
	raw, err := txn.First(TableInstances, "id", id)
	if err != nil {
		return fmt.Errorf("instance lookup %s: %w", id, err)
	}
	if raw == nil {
		return nil
	}
	old := raw.(*structs.Instance)
	inst := old.Copy()
	fn(inst)
	inst.ModifyIndex = index
	return replaceInstance(txn, old, inst)
}

// insertAlloc stores an allocation, keeping host usage in step with
// whether it was and is live.
func insertAlloc(txn *memdb.Txn, index uint64, a *structs.Allocation, hb *hostBatch) error {
	return insertAllocOf(txn, index, a, nil, hb)
}

// insertAllocOf is insertAlloc for a caller that may have read the
// allocation's instance in txn already (inst; nil to have it read
// when needed).
func insertAllocOf(txn *memdb.Txn, index uint64, a *structs.Allocation, inst *structs.Instance, hb *hostBatch) error {
	raw, err := txn.First(TableAllocations, "id", a.ID)
	if err != nil {
		return fmt.Errorf("allocation lookup %s: %w", a.ID, err)
	}
	old, _ := raw.(*structs.Allocation)
	return insertAllocOver(txn, index, a, old, inst, hb)
}

// insertAllocOver is insertAllocOf for an allocation whose stored
// version (old, nil when it is new) has been read already.
func insertAllocOver(txn *memdb.Txn, index uint64, a, old *structs.Allocation, inst *structs.Instance, hb *hostBatch) error {
	var err error
	internAlloc(a)
	wasLive, desiredChanged := false, true
	if old != nil {
		wasLive = !old.Terminal()
		a.CreateIndex = old.CreateIndex
		desiredChanged = a.AllocModifyIndex != old.AllocModifyIndex
	} else {
		a.CreateIndex = index
		if a.AllocModifyIndex == 0 {
			a.AllocModifyIndex = index
		}
		// Share the instance's id string rather than hold a copy.
		if inst == nil {
			if inst, err = first[*structs.Instance](txn, nil, TableInstances, "id", a.InstanceID); err != nil {
				return err
			}
		}
		if inst != nil && inst.ID == a.InstanceID {
			a.InstanceID = inst.ID
		}
	}
	if desiredChanged {
		hb.touch(a.HostID)
	}
	a.ModifyIndex = index
	isLive := !a.Terminal()
	switch {
	case isLive && !wasLive:
		hb.add(a.HostID, a.Resources, +1)
	case wasLive && !isLive:
		hb.add(a.HostID, a.Resources, -1)
	}
	if err := txn.Insert(TableAllocations, a); err != nil {
		return fmt.Errorf("insert allocation %s: %w", a.ID, err)
	}
	return nil
}

// deleteAlloc removes an allocation and frees its usage if it was live.
func deleteAlloc(txn *memdb.Txn, a *structs.Allocation, hb *hostBatch) error {
	if !a.Terminal() {
		hb.add(a.HostID, a.Resources, -1)
	}
	if err := txn.Delete(TableAllocations, a); err != nil {
		return fmt.Errorf("delete allocation %s: %w", a.ID, err)
	}
	hb.touch(a.HostID)
	return nil
}

// allocsOfInstance lists an instance's allocations inside a transaction.
func allocsOfInstance(txn *memdb.Txn, instanceID string) ([]*structs.Allocation, error) {
	return list[*structs.Allocation](txn, nil, TableAllocations, "instance", instanceID)
}
