package fsm

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// reportReads are what a batch of agents' reports reads in its common
// case, read before any of it is written (storedVersions says why that
// keeps the writes cheap): each update's stored allocation and its
// instance, and the actions of each instance a report may finish
// building. A batch of reports carries tens of updates, and reading
// each right before writing it made every table's writes copy their
// radix paths again, once per update.
type reportReads struct {
	allocs  map[string]*structs.Allocation
	insts   map[string]*structs.Instance
	actions map[string][]*structs.InstanceAction
}

// readReports reads up front what entries' updates read, or returns nil
// when they must be read one at a time, as each is applied: when a
// report reschedules, when an allocation or an instance comes twice (the
// later update must see the earlier one's write), or when an update may
// change more than its own allocation, instance and create action (a
// failure, a deletion, an instance in a task).
func readReports(txn *memdb.Txn, entries []*structs.AllocClientUpdateEntry) (*reportReads, error) {
	n := 0
	for _, e := range entries {
		if e == nil || len(e.Reschedules) > 0 {
			return nil, nil
		}
		n += len(e.Updates)
	}
	if n < 2 {
		return nil, nil
	}
	r := &reportReads{allocs: make(map[string]*structs.Allocation, n), insts: make(map[string]*structs.Instance, n)}
	for _, e := range entries {
		for _, u := range e.Updates {
			if !plainReport(u.ClientState) {
				return nil, nil
			}
			if _, twice := r.allocs[u.AllocID]; twice {
				return nil, nil
			}
			a, err := first[*structs.Allocation](txn, nil, TableAllocations, "id", u.AllocID)
			if err != nil {
				return nil, err
			}
			r.allocs[u.AllocID] = a
		}
	}
	var building []string
	for _, a := range r.allocs {
		if a == nil {
			continue
		}
		if _, twice := r.insts[a.InstanceID]; twice {
			return nil, nil
		}
		inst, err := first[*structs.Instance](txn, nil, TableInstances, "id", a.InstanceID)
		if err != nil {
			return nil, err
		}
		if inst != nil && inst.Task != nil {
			return nil, nil
		}
		r.insts[a.InstanceID] = inst
		if inst != nil && inst.VMState == structs.VMStateBuilding {
			building = append(building, inst.ID)
		}
	}
	if len(building) > 0 {
		r.actions = make(map[string][]*structs.InstanceAction, len(building))
		for _, id := range building {
			acts, err := actionsOfInstance(txn, nil, id)
			if err != nil {
				return nil, err
			}
			r.actions[id] = acts
		}
	}
	return r, nil
}

// plainReport reports whether an update in state changes nothing but
// its allocation, its instance and the instance's create action.
func plainReport(state string) bool {
	switch state {
	case structs.AllocClientRunning, structs.AllocClientStopped, structs.AllocClientSpawning, structs.AllocClientPending:
		return true
	}
	return false
}

// alloc returns update u's stored allocation, from r or read now.
func (r *reportReads) alloc(txn *memdb.Txn, id string) (*structs.Allocation, error) {
	if r != nil {
		return r.allocs[id], nil
	}
	return first[*structs.Allocation](txn, nil, TableAllocations, "id", id)
}

// instance returns a stored instance, from r or read now.
func (r *reportReads) instance(t *taskTxn, id string) (*structs.Instance, error) {
	if r != nil {
		return r.insts[id], nil
	}
	return t.instance(id)
}

// instanceActions returns an instance's actions, from r or read now.
func (r *reportReads) instanceActions(txn *memdb.Txn, id string) ([]*structs.InstanceAction, error) {
	if r != nil {
		return r.actions[id], nil
	}
	return actionsOfInstance(txn, nil, id)
}
