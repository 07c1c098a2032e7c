package fsm

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

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
	pre, err := t.readPlacements(e.Placements)
	if err != nil {
		return err
	}
	zones := map[string]string{} // host id → its effective zone, in this plan
	volumes := false             // whether a placement changed a volume's attachment
	for i, p := range e.Placements {
		placed, err := t.applyPlacement(e, i, p, pre, owned, zones)
		if err != nil {
			return err
		}
		volumes = volumes || placed
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
	tables := []string{TableAllocations, TableInstances, TableHosts, TableEvals, TableInstanceActions, TableMigrations}
	if volumes {
		tables = append(tables, TableVolumes)
	}
	return commitAt(txn, index, tables...)
}

// placementReads are the stored instance and allocation of each of a
// plan's placements, read before any is written (see storedVersions
// for why that matters).
type placementReads struct {
	insts  []*structs.Instance
	allocs []*structs.Allocation
}

// readPlacements reads every placement's instance and allocation up
// front, or returns nil when they must be read one at a time, as each
// placement is applied: when an instance or an allocation comes twice
// (the later one must see the earlier one's write), or a placement
// belongs to a task (which changes more than its own rows).
func (t *taskTxn) readPlacements(ps []*structs.Allocation) (*placementReads, error) {
	if len(ps) < 2 {
		return nil, nil
	}
	r := &placementReads{insts: make([]*structs.Instance, len(ps)), allocs: make([]*structs.Allocation, len(ps))}
	seen := make(map[string]bool, 2*len(ps))
	for i, p := range ps {
		if seen[p.InstanceID] || seen[p.ID] {
			return nil, nil
		}
		seen[p.InstanceID], seen[p.ID] = true, true
		inst, err := t.instance(p.InstanceID)
		if err != nil {
			return nil, err
		}
		if inst != nil && inst.Task != nil {
			return nil, nil
		}
		r.insts[i] = inst
	}
	for i, p := range ps {
		a, err := t.alloc(p.ID)
		if err != nil {
			return nil, err
		}
		r.allocs[i] = a
	}
	return r, nil
}

// applyPlacement applies e's placement i (p): the allocation, the
// instance's host and zone, and its boot volumes' attachments' host
// (volumes says whether it changed one). pre holds what was read up
// front, or is nil to read it now.
func (t *taskTxn) applyPlacement(e *structs.PlanApplyEntry, i int, p *structs.Allocation, pre *placementReads, owned bool, zones map[string]string) (volumes bool, err error) {
	var inst *structs.Instance
	if pre != nil {
		inst = pre.insts[i]
	} else {
		// The instance is read once for the task check, the allocation
		// and the instance's own update.
		if inst, err = t.instance(p.InstanceID); err != nil {
			return false, err
		}
		if done, err := t.placeTaskOf(inst, p, nil); err != nil || done {
			return false, err
		}
	}
	a := p
	if !owned {
		a = p.Copy()
	}
	a.AllocModifyIndex = t.index
	if pre != nil {
		err = insertAllocOver(t.txn, t.index, a, pre.allocs[i], inst, t.hb)
	} else {
		err = insertAllocOf(t.txn, t.index, a, inst, t.hb)
	}
	if err != nil || inst == nil {
		return false, err // or deleted meanwhile
	}
	hostAZ, ok := zones[a.HostID]
	if !ok {
		if hostAZ, err = placedZone(t.txn, a.HostID); err != nil {
			return false, err
		}
		zones[a.HostID] = hostAZ
	}
	c := inst.Copy()
	c.HostID, c.UpdatedAt, c.ModifyIndex = a.HostID, e.UpdatedAt, t.index
	if c.AZ == "" {
		// Nova records the zone the instance landed in.
		c.AZ = hostAZ
	}
	if volumes, err = t.placeBootVolumes(c, a.HostID); err != nil {
		return false, err
	}
	return volumes, replaceInstance(t.txn, inst, c)
}

// placeTask hands a placement (or a NoValidHost fault) to the task of
// an instance whose move waits for it; done is false for instances
// that are simply being built.
func (t *taskTxn) placeTask(instanceID string, p *structs.Allocation, f *structs.Fault) (done bool, err error) {
	inst, err := t.instance(instanceID)
	if err != nil {
		return false, err
	}
	return t.placeTaskOf(inst, p, f)
}

// placeTaskOf is placeTask for an instance read in t already (nil when
// there is none).
func (t *taskTxn) placeTaskOf(inst *structs.Instance, p *structs.Allocation, f *structs.Fault) (done bool, err error) {
	if inst == nil || inst.Task == nil {
		return false, nil
	}
	if inst.Task.Step != structs.StepSchedule {
		return true, nil // a late duplicate: the task has moved on
	}
	return true, t.placeMove(inst.Copy(), p, f)
}

// placedZone is the effective zone of the host an instance was placed
// on (an aggregate's, else the agent's), "" when the host is gone.
func placedZone(txn *memdb.Txn, hostID string) (string, error) {
	raw, err := txn.First(TableHosts, "id", hostID)
	if err != nil {
		return "", fmt.Errorf("host lookup %s: %w", hostID, err)
	}
	if raw == nil {
		return "", nil
	}
	return hostZone(txn, nil, raw.(*structs.Host))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
