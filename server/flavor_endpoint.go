package server

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Flavor is the endpoint for flavors.
type Flavor struct{ srv *Server }

// Upsert creates or replaces flavors.
func (e *Flavor) Upsert(args *structs.FlavorUpsertRequest, reply *structs.FlavorUpsertResponse) error {
	if done, err := e.srv.forward("Flavor.Upsert", args, args, reply); done {
		return err
	}
	if len(args.Flavors) == 0 {
		return structs.Errorf(structs.KindInvalid, "no flavors to upsert")
	}
	seen := map[string]bool{}
	for _, f := range args.Flavors {
		if f == nil {
			return structs.Errorf(structs.KindInvalid, "empty flavor in request")
		}
		if err := f.Validate(); err != nil {
			return err
		}
		if seen[f.ID] || seen["name:"+f.Name] {
			return structs.Errorf(structs.KindInvalid, "flavor %q appears twice in the request", f.ID)
		}
		seen[f.ID], seen["name:"+f.Name] = true, true
	}
	if args.CheckIndex != 0 {
		if len(args.Flavors) != 1 {
			return structs.Errorf(structs.KindInvalid, "a flavor upsert with a check index names exactly one flavor")
		}
		// An older server would apply it unchecked while the others
		// refuse it; and dropping the check would lose a concurrent
		// write. So it waits for every server to know it (a server not
		// yet heard from since a restart counts as old).
		if l, holder := e.srv.ClusterFSMLevel(); l < structs.FSMLevelFlavorCAS {
			return structs.Errorf(structs.KindUnavailable, "changing a flavor in place needs every server at %s; %s is at %s",
				structs.FSMLevelFlavorCAS, holder, l)
		}
	}
	index, err := e.srv.apply(structs.FlavorUpsertRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	state := e.srv.fsm.State()
	for _, f := range args.Flavors {
		stored, err := state.FlavorByID(nil, f.ID)
		if err != nil {
			return err
		}
		if stored != nil {
			reply.Flavors = append(reply.Flavors, stored)
		}
	}
	return nil
}

// Delete removes flavors by id.
func (e *Flavor) Delete(args *structs.FlavorDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Flavor.Delete", args, args, reply); done {
		return err
	}
	if len(args.IDs) == 0 {
		return structs.Errorf(structs.KindInvalid, "no flavor ids to delete")
	}
	state := e.srv.fsm.State()
	for _, id := range args.IDs {
		f, err := state.FlavorByID(nil, id)
		if err != nil {
			return err
		}
		if f == nil {
			return structs.Errorf(structs.KindNotFound, "flavor %q not found", id)
		}
	}
	index, err := e.srv.apply(structs.FlavorDeleteRequestType, args)
	reply.Index = index
	return err
}

// Get reads one flavor by id or name.
func (e *Flavor) Get(args *structs.FlavorSpecificRequest, reply *structs.SingleFlavorResponse) error {
	if done, err := e.srv.forward("Flavor.Get", args, args, reply); done {
		return err
	}
	if args.ID == "" {
		return structs.Errorf(structs.KindInvalid, "flavor id is required")
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		f, err := state.FlavorByIDOrName(ws, args.ID)
		reply.Flavor = f
		return f, state.Index(fsm.TableFlavors), err
	})
	if err == nil && reply.Flavor == nil {
		return structs.Errorf(structs.KindNotFound, "flavor %q not found", args.ID)
	}
	return err
}

// List reads every flavor.
func (e *Flavor) List(args *structs.FlavorListRequest, reply *structs.FlavorListResponse) error {
	if done, err := e.srv.forward("Flavor.List", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		fl, err := state.Flavors(ws)
		reply.Flavors = fl
		return fl, state.Index(fsm.TableFlavors), err
	})
}
