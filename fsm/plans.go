package fsm

import (
	"fmt"
	"sort"

	"github.com/stratus-cloud/stratus/structs"
)

func init() {
	registerApply(structs.PlanApplyType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.PlanApplyEntry
		if err := decodeBody(structs.PlanApplyType, body, &e); err != nil {
			return err
		}
		return s.applyPlan(index, &e, true) // decoded here: its allocations are ours to keep
	})
}

// ApplyPlan commits what the leader's plan applier accepted: the new
// allocations (each instance then has a host), NoValidHost faults, and
// the evaluations' status. The applier has already checked capacity
// against the newest state, so nothing here can overcommit. It stores
// copies of e's placements.
func (s *StateStore) ApplyPlan(index uint64, e *structs.PlanApplyEntry) error {
	return s.applyPlan(index, e, false)
}

// applyPlan is ApplyPlan; owned says that e's placements may be stored
// as they are (a freshly decoded entry), sparing each a copy.
func (s *StateStore) applyPlan(index uint64, e *structs.PlanApplyEntry, owned bool) error {
	txn := s.writeTxn()
	defer txn.Abort()
	hb := newHostBatch()
	t := &taskTxn{txn: txn, index: index, at: e.UpdatedAt, hb: hb}
	for _, p := range e.Placements {
		if done, err := t.placeTask(p.InstanceID, p, nil); err != nil || done {
			if err != nil {
				return err
			}
			continue
		}
		a := p
		if !owned {
			a = p.Copy()
		}
		a.AllocModifyIndex = index
		if err := insertAlloc(txn, index, a, hb); err != nil {
			return err
		}
		hostAZ := ""
		if raw, err := txn.First(TableHosts, "id", a.HostID); err != nil {
			return fmt.Errorf("host lookup %s: %w", a.HostID, err)
		} else if raw != nil {
			// The effective zone: an aggregate's, else the agent's.
			if hostAZ, err = hostZone(txn, nil, raw.(*structs.Host)); err != nil {
				return err
			}
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
	for _, id := range sortedKeys(e.Faults) {
		f := e.Faults[id]
		if done, err := t.placeTask(id, nil, f); err != nil || done {
			if err != nil {
				return err
			}
			continue
		}
		fc := *f
		if err := finishCreate(t, &structs.Instance{ID: id}, f.Message); err != nil {
			return err
		}
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
	return commitAt(txn, index, TableAllocations, TableInstances, TableHosts, TableEvals, TableInstanceActions, TableMigrations)
}

// placeTask hands a placement (or a NoValidHost fault) to the task of
// an instance whose move waits for it; done is false for instances
// that are simply being built.
func (t *taskTxn) placeTask(instanceID string, p *structs.Allocation, f *structs.Fault) (done bool, err error) {
	inst, err := t.instance(instanceID)
	if err != nil || inst == nil || inst.Task == nil {
		return false, err
	}
	if inst.Task.Step != structs.StepSchedule {
		return true, nil // a late duplicate: the task has moved on
	}
	return true, t.placeMove(inst.Copy(), p, f)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
