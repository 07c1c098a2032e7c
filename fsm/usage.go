package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// adjustHostUsage adds (sign +1) or removes (sign -1) an allocation's
// resources from its host's Usage, so the scheduler and plan applier
// read free capacity from the host alone. The host is copied, never
// changed in place: readers may hold the old object.
func adjustHostUsage(txn *memdb.Txn, index uint64, hostID string, res map[string]int64, sign int64) error {
	raw, err := txn.First(TableHosts, "id", hostID)
	if err != nil {
		return fmt.Errorf("host lookup %s: %w", hostID, err)
	}
	if raw == nil {
		// The host was deleted; its usage went with it.
		return nil
	}
	h := raw.(*structs.Host).Copy()
	if h.Usage == nil {
		h.Usage = make(map[string]int64, len(res))
	}
	for class, n := range res {
		h.Usage[class] += sign * n
		if h.Usage[class] <= 0 {
			delete(h.Usage, class)
		}
	}
	h.ModifyIndex = index
	if err := txn.Insert(TableHosts, h); err != nil {
		return fmt.Errorf("update usage of host %s: %w", hostID, err)
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
	inst := raw.(*structs.Instance).Copy()
	fn(inst)
	inst.ModifyIndex = index
	if err := txn.Insert(TableInstances, inst); err != nil {
		return fmt.Errorf("update instance %s: %w", id, err)
	}
	return nil
}

// insertAlloc stores an allocation, keeping host usage in step with
// whether it was and is live.
func insertAlloc(txn *memdb.Txn, index uint64, a *structs.Allocation) error {
	raw, err := txn.First(TableAllocations, "id", a.ID)
	if err != nil {
		return fmt.Errorf("allocation lookup %s: %w", a.ID, err)
	}
	wasLive, desiredChanged := false, true
	if raw != nil {
		old := raw.(*structs.Allocation)
		wasLive = !old.Terminal()
		a.CreateIndex = old.CreateIndex
		desiredChanged = a.AllocModifyIndex != old.AllocModifyIndex
	} else {
		a.CreateIndex = index
		if a.AllocModifyIndex == 0 {
			a.AllocModifyIndex = index
		}
	}
	if desiredChanged {
		if err := bumpAllocsIndex(txn, index, a.HostID); err != nil {
			return err
		}
	}
	a.ModifyIndex = index
	isLive := !a.Terminal()
	switch {
	case isLive && !wasLive:
		err = adjustHostUsage(txn, index, a.HostID, a.Resources, +1)
	case wasLive && !isLive:
		err = adjustHostUsage(txn, index, a.HostID, a.Resources, -1)
	}
	if err != nil {
		return err
	}
	if err := txn.Insert(TableAllocations, a); err != nil {
		return fmt.Errorf("insert allocation %s: %w", a.ID, err)
	}
	return nil
}

// deleteAlloc removes an allocation and frees its usage if it was live.
func deleteAlloc(txn *memdb.Txn, index uint64, a *structs.Allocation) error {
	if !a.Terminal() {
		if err := adjustHostUsage(txn, index, a.HostID, a.Resources, -1); err != nil {
			return err
		}
	}
	if err := txn.Delete(TableAllocations, a); err != nil {
		return fmt.Errorf("delete allocation %s: %w", a.ID, err)
	}
	return bumpAllocsIndex(txn, index, a.HostID)
}

// bumpAllocsIndex records that the host's agent has new work.
func bumpAllocsIndex(txn *memdb.Txn, index uint64, hostID string) error {
	return updateHost(txn, index, hostID, func(h *structs.Host) { h.AllocsIndex = index })
}

// allocsOfInstance lists an instance's allocations inside a transaction.
func allocsOfInstance(txn *memdb.Txn, instanceID string) ([]*structs.Allocation, error) {
	return list[*structs.Allocation](txn, nil, TableAllocations, "instance", instanceID)
}
