package server

import (
	"strings"
	"time"

	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Aggregate is the endpoint for host aggregates and, through their
// availability_zone metadata, availability zones. The rules that depend
// on the state (unique names, one zone per host, …) are checked by the
// FSM as it applies each change; the endpoint checks the request's own
// fields and answers with the aggregate as the change left it.
type Aggregate struct{ srv *Server }

// Create makes an aggregate, a zone when AZ is set.
func (e *Aggregate) Create(args *structs.AggregateCreateRequest, reply *structs.SingleAggregateResponse) error {
	if done, err := e.srv.forward("Aggregate.Create", args, args, reply); done {
		return err
	}
	if err := checkAggregateName(args.Name); err != nil {
		return err
	}
	entry := &structs.AggregateEntry{Op: structs.AggregateOpCreate, UUID: uuid.NewString(), Name: args.Name, At: time.Now().UnixNano()}
	if args.AZ != "" {
		if err := checkZoneName(args.AZ); err != nil {
			return err
		}
		az := args.AZ
		entry.AZ = &az
	}
	index, err := e.srv.apply(structs.AggregateUpdateType, entry)
	if err != nil {
		return err
	}
	return e.answer(int64(index), index, reply)
}

// Update renames an aggregate or changes its zone.
func (e *Aggregate) Update(args *structs.AggregateUpdateRequest, reply *structs.SingleAggregateResponse) error {
	if done, err := e.srv.forward("Aggregate.Update", args, args, reply); done {
		return err
	}
	if args.Name == nil && args.AZ == nil {
		return structs.Errorf(structs.KindInvalid, "aggregate update changes nothing")
	}
	entry := &structs.AggregateEntry{Op: structs.AggregateOpUpdate, AggregateID: args.AggregateID, At: time.Now().UnixNano()}
	if args.Name != nil {
		if err := checkAggregateName(*args.Name); err != nil {
			return err
		}
		entry.Name = *args.Name
	}
	if args.AZ != nil {
		if *args.AZ != "" {
			if err := checkZoneName(*args.AZ); err != nil {
				return err
			}
		}
		az := *args.AZ
		entry.AZ = &az
	}
	return e.write(entry, reply)
}

// Delete removes an empty aggregate.
func (e *Aggregate) Delete(args *structs.AggregateDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Aggregate.Delete", args, args, reply); done {
		return err
	}
	index, err := e.srv.apply(structs.AggregateUpdateType, &structs.AggregateEntry{
		Op: structs.AggregateOpDelete, AggregateID: args.AggregateID, At: time.Now().UnixNano()})
	reply.Index = index
	return err
}

// AddHost puts a host (by id or name) in an aggregate.
func (e *Aggregate) AddHost(args *structs.AggregateHostRequest, reply *structs.SingleAggregateResponse) error {
	if done, err := e.srv.forward("Aggregate.AddHost", args, args, reply); done {
		return err
	}
	return e.hostOp(structs.AggregateOpAddHost, args, reply)
}

// RemoveHost takes a host (by id or name) out of an aggregate.
func (e *Aggregate) RemoveHost(args *structs.AggregateHostRequest, reply *structs.SingleAggregateResponse) error {
	if done, err := e.srv.forward("Aggregate.RemoveHost", args, args, reply); done {
		return err
	}
	return e.hostOp(structs.AggregateOpRemoveHost, args, reply)
}

func (e *Aggregate) hostOp(op string, args *structs.AggregateHostRequest, reply *structs.SingleAggregateResponse) error {
	state := e.srv.fsm.State()
	host, err := state.HostByID(nil, args.Host)
	if err == nil && host == nil {
		host, err = state.HostByName(nil, args.Host)
	}
	if err != nil {
		return err
	}
	if host == nil {
		return structs.Errorf(structs.KindNotFound, "Compute host %s could not be found.", args.Host)
	}
	return e.write(&structs.AggregateEntry{Op: op, AggregateID: args.AggregateID, HostID: host.ID, At: time.Now().UnixNano()}, reply)
}

// SetMetadata adds, replaces and removes metadata keys.
func (e *Aggregate) SetMetadata(args *structs.AggregateMetadataRequest, reply *structs.SingleAggregateResponse) error {
	if done, err := e.srv.forward("Aggregate.SetMetadata", args, args, reply); done {
		return err
	}
	for k, v := range args.Set {
		if k == "" || len(k) > 255 || len(v) > 255 {
			return structs.Errorf(structs.KindInvalid, "aggregate metadata %q: keys must be 1-255 and values 0-255 characters", k)
		}
		if k == structs.AggregateAZKey && v != "" {
			if err := checkZoneName(v); err != nil {
				return err
			}
		}
	}
	return e.write(&structs.AggregateEntry{Op: structs.AggregateOpSetMetadata, AggregateID: args.AggregateID,
		SetMetadata: args.Set, DeleteMetadata: args.Delete, At: time.Now().UnixNano()}, reply)
}

// Get reads one aggregate.
func (e *Aggregate) Get(args *structs.AggregateSpecificRequest, reply *structs.SingleAggregateResponse) error {
	if done, err := e.srv.forward("Aggregate.Get", args, args, reply); done {
		return err
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		a, err := state.AggregateByID(ws, args.AggregateID)
		reply.Aggregate = a
		return a, state.Index(fsm.TableAggregates), err
	})
	if err == nil && reply.Aggregate == nil {
		return structs.Errorf(structs.KindNotFound, "Aggregate %d could not be found.", args.AggregateID)
	}
	return err
}

// List reads every aggregate, by id.
func (e *Aggregate) List(args *structs.AggregateListRequest, reply *structs.AggregateListResponse) error {
	if done, err := e.srv.forward("Aggregate.List", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		aggs, err := state.Aggregates(ws)
		reply.Aggregates = aggs
		return aggs, state.Index(fsm.TableAggregates), err
	})
}

func (e *Aggregate) write(entry *structs.AggregateEntry, reply *structs.SingleAggregateResponse) error {
	index, err := e.srv.apply(structs.AggregateUpdateType, entry)
	if err != nil {
		return err
	}
	return e.answer(entry.AggregateID, index, reply)
}

// answer reads the aggregate a write left, as of the write's index.
func (e *Aggregate) answer(id int64, index uint64, reply *structs.SingleAggregateResponse) error {
	a, err := e.srv.fsm.State().AggregateByID(nil, id)
	if err != nil {
		return err
	}
	if a == nil {
		return structs.Errorf(structs.KindNotFound, "Aggregate %d could not be found.", id)
	}
	reply.Aggregate, reply.Index = a, index
	return nil
}

func checkAggregateName(name string) error {
	if strings.TrimSpace(name) == "" || len(name) > 255 {
		return structs.Errorf(structs.KindInvalid, "Aggregate name must be 1-255 characters")
	}
	return nil
}

// checkZoneName refuses what cannot be a zone's name: ':' separates the
// zone from a host in "az:host".
func checkZoneName(az string) error {
	if strings.TrimSpace(az) == "" || len(az) > 255 || strings.Contains(az, ":") {
		return structs.Errorf(structs.KindInvalid, "availability zone %q must be 1-255 characters without ':'", az)
	}
	return nil
}
