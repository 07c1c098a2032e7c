package server

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Alloc is the endpoint agents pull their work from and report to.
type Alloc struct{ srv *Server }

// GetHostAllocs answers a host's agent with a light map of its
// allocations to their AllocModifyIndex. It blocks until the servers
// change the host's work past MinQueryIndex.
func (e *Alloc) GetHostAllocs(args *structs.AllocHostRequest, reply *structs.AllocIndexResponse) error {
	if err := e.srv.authenticateNode(args.AuthToken, args.HostID); err != nil {
		return err
	}
	if done, err := e.srv.forward("Alloc.GetHostAllocs", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		host, err := state.HostByID(ws, args.HostID)
		if err != nil {
			return nil, 0, err
		}
		if host == nil {
			return nil, 0, structs.Errorf(structs.KindNotFound, "host %q is not registered", args.HostID)
		}
		allocs, err := state.AllocationsByHost(nil, args.HostID)
		if err != nil {
			return nil, 0, err
		}
		reply.Allocs = make(map[string]uint64, len(allocs))
		for _, a := range allocs {
			reply.Allocs[a.ID] = a.AllocModifyIndex
		}
		return reply.Allocs, host.AllocsIndex, nil
	})
}

// GetAllocs returns allocations by id with their instances, to the
// agent of their hosts only.
func (e *Alloc) GetAllocs(args *structs.AllocsGetRequest, reply *structs.AllocListResponse) error {
	if err := e.srv.authenticateNodeAllocs(args.AuthToken, args.AllocIDs...); err != nil {
		return err
	}
	if done, err := e.srv.forward("Alloc.GetAllocs", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		reply.Allocs, reply.Instances = nil, nil
		for _, id := range args.AllocIDs {
			a, err := state.AllocationByID(ws, id)
			if err != nil {
				return nil, 0, err
			}
			if a == nil {
				continue
			}
			// Checked again here: a blocking query may wake after the
			// allocation moved to another host.
			if err := e.srv.authenticateNode(args.AuthToken, a.HostID); err != nil {
				return nil, 0, err
			}
			reply.Allocs = append(reply.Allocs, a)
			inst, err := state.InstanceByID(ws, a.InstanceID)
			if err != nil {
				return nil, 0, err
			}
			if inst != nil {
				reply.Instances = append(reply.Instances, inst)
			}
		}
		return reply.Allocs, state.Index(fsm.TableAllocations), nil
	})
}

// List reads every allocation.
func (e *Alloc) List(args *structs.AllocListRequest, reply *structs.AllocListResponse) error {
	if done, err := e.srv.forward("Alloc.List", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		var allocs []*structs.Allocation
		var err error
		switch {
		case args.InstanceID != "":
			allocs, err = state.AllocationsByInstance(ws, args.InstanceID)
		case args.HostID != "":
			allocs, err = state.AllocationsByHost(ws, args.HostID)
		default:
			allocs, err = state.Allocations(ws)
		}
		reply.Allocs = allocs
		return allocs, state.Index(fsm.TableAllocations), err
	})
}

// UpdateFromClient records a batch of an agent's reports. A failed build
// is rescheduled to another host while attempts remain, else the
// instance goes to ERROR with a fault listing every attempt.
func (e *Alloc) UpdateFromClient(args *structs.AllocUpdateRequest, reply *structs.GenericResponse) error {
	if err := e.srv.authenticateNode(args.AuthToken, args.HostID); err != nil {
		return err
	}
	if done, err := e.srv.forward("Alloc.UpdateFromClient", args, args, reply); done {
		return err
	}
	if args.HostID == "" || len(args.Updates) == 0 {
		return structs.Errorf(structs.KindInvalid, "an update needs a host and at least one report")
	}
	state := e.srv.fsm.State()
	now := time.Now().UnixNano()
	entry := &structs.AllocClientUpdateEntry{HostID: args.HostID, Updates: args.Updates, Faults: map[string]*structs.Fault{}, UpdatedAt: now}
	for _, u := range args.Updates {
		if u == nil {
			return structs.Errorf(structs.KindInvalid, "empty report")
		}
		a, err := state.AllocationByID(nil, u.AllocID)
		if err != nil {
			return err
		}
		if a != nil && a.HostID != args.HostID {
			return structs.Errorf(structs.KindPermission, "host %s reported on allocation %s of another host", args.HostID, a.ID)
		}
		if u.ClientState != structs.AllocClientFailed {
			continue
		}
		if a == nil || (a.ClientState != structs.AllocClientPending && a.ClientState != structs.AllocClientSpawning) {
			continue
		}
		inst, err := state.InstanceByID(nil, a.InstanceID)
		if err != nil || inst == nil {
			continue
		}
		attempts := append(inst.Attempts, &structs.BuildAttempt{HostID: a.HostID, Error: u.ClientDescription})
		if len(attempts) < e.srv.config.MaxBuildAttempts && inst.TaskState != structs.TaskDeleting {
			entry.Reschedules = append(entry.Reschedules, &structs.Evaluation{
				ID: uuid.NewString(), InstanceIDs: []string{inst.ID}, TriggeredBy: structs.EvalTriggerReschedule,
				Status: structs.EvalStatusPending, CreatedAt: now,
			})
			continue
		}
		entry.Faults[inst.ID] = retriesFault(inst.ID, attempts, now)
	}
	// The reschedules reach the broker as they commit (eval_enqueue.go).
	index, err := e.srv.allocUpdates.submit(e.srv, entry)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// retriesFault is Nova's MaxRetriesExceeded fault, listing every attempt.
func retriesFault(instanceID string, attempts []*structs.BuildAttempt, now int64) *structs.Fault {
	var lines []string
	for i, a := range attempts {
		lines = append(lines, fmt.Sprintf("attempt %d on host %s: %s", i+1, a.HostID, a.Error))
	}
	return &structs.Fault{
		Code:      500,
		Message:   fmt.Sprintf("Exceeded maximum number of retries. Exhausted all hosts available for retrying build failures for instance %s.", instanceID),
		Details:   strings.Join(lines, "\n"),
		CreatedAt: now,
	}
}
