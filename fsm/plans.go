package fsm

import (
	"fmt"

	"github.com/stratus-cloud/stratus/structs"
)

func init() {
	registerApply(structs.PlanApplyType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.PlanApplyEntry
		if err := decodeBody(structs.PlanApplyType, body, &e); err != nil {
			return err
		}
		return s.ApplyPlan(index, &e)
	})
}

// ApplyPlan commits what the leader's plan applier accepted: the new
// allocations (each instance then has a host), NoValidHost faults, and
// the evaluations' status. The applier has already checked capacity
// against the newest state, so nothing here can overcommit.
func (s *StateStore) ApplyPlan(index uint64, e *structs.PlanApplyEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	hb := newHostBatch()
	for _, p := range e.Placements {
		a := p.Copy()
		a.AllocModifyIndex = index
		if err := insertAlloc(txn, index, a, hb); err != nil {
			return err
		}
		hostAZ := ""
		if raw, err := txn.First(TableHosts, "id", a.HostID); err != nil {
			return fmt.Errorf("host lookup %s: %w", a.HostID, err)
		} else if raw != nil {
			hostAZ = raw.(*structs.Host).AZ
		}
		if err := updateInstance(txn, index, a.InstanceID, func(i *structs.Instance) {
			i.HostID, i.UpdatedAt = a.HostID, e.UpdatedAt
			if i.AZ == "" {
				// Nova records the zone the instance landed in.
				i.AZ = hostAZ
			}
		}); err != nil {
			return err
		}
	}
	for id, f := range e.Faults {
		fc := *f
		if err := updateInstance(txn, index, id, func(i *structs.Instance) {
			i.VMState, i.TaskState, i.PowerState = structs.VMStateError, "", structs.PowerNoState
			i.Fault, i.UpdatedAt = &fc, e.UpdatedAt
		}); err != nil {
			return err
		}
	}
	if err := upsertEvals(txn, index, e.Evals); err != nil {
		return err
	}
	if err := hb.flush(txn, index); err != nil {
		return err
	}
	return commitAt(txn, index, TableAllocations, TableInstances, TableHosts, TableEvals)
}
