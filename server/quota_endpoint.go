package server

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Quota is the endpoint for quotas: projects' limits, the editable
// defaults (the "default" quota class) and usage. Enforcement is the
// FSM's, in the entries that consume quota.
type Quota struct{ srv *Server }

// Get reads a project's effective limits and, with Usage, what it uses.
func (e *Quota) Get(args *structs.QuotaGetRequest, reply *structs.QuotaResponse) error {
	if done, err := e.srv.forward("Quota.Get", args, args, reply); done {
		return err
	}
	if args.ProjectID == "" {
		return structs.Errorf(structs.KindInvalid, "project id is required")
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		reply.Limits, reply.Usage = state.QuotaLimits(ws, args.ProjectID), nil
		index := state.Index(fsm.TableQuotas)
		if args.Usage {
			used, err := state.QuotaUsage(ws, args.ProjectID, args.UserID)
			if err != nil {
				return nil, 0, err
			}
			reply.Usage = used
			index = max(index, state.Index(fsm.TableInstances), state.Index(fsm.TableServerGroups), state.Index(fsm.TableKeyPairs))
		}
		return reply.Limits, index, nil
	})
}

// GetClass reads a quota class's effective limits; "default" holds the
// defaults every project without its own limits gets.
func (e *Quota) GetClass(args *structs.QuotaClassRequest, reply *structs.QuotaResponse) error {
	if done, err := e.srv.forward("Quota.GetClass", args, args, reply); done {
		return err
	}
	class := args.Class
	if class == "" {
		class = structs.QuotaDefaultClass
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		reply.Limits = state.QuotaClassLimits(ws, class)
		return reply.Limits, state.Index(fsm.TableQuotas), nil
	})
}

// Update sets limits of a project or a class and answers with the
// effective limits. As in Nova, a project's limit below what it already
// uses is refused unless Force is set (-1, unlimited, always passes).
func (e *Quota) Update(args *structs.QuotaUpdateRequest, reply *structs.QuotaResponse) error {
	if done, err := e.srv.forward("Quota.Update", args, args, reply); done {
		return err
	}
	if args.ID == "" {
		return structs.Errorf(structs.KindInvalid, "quota update without a project or class")
	}
	for k, v := range args.Limits {
		if _, ok := structs.DefaultQuotas[k]; !ok {
			return structs.Errorf(structs.KindInvalid, "unknown quota resource %q", k)
		}
		if v < structs.QuotaUnlimited {
			return structs.Errorf(structs.KindInvalid, "quota %s must be -1 (unlimited) or more, not %d", k, v)
		}
	}
	// The usage check is in the entry (QuotaEntry.CheckUsage), where no
	// create can come between it and the write; checking here first
	// answers at once, and is all a cluster still being upgraded gets.
	check := args.Scope == structs.QuotaScopeProject && !args.Force
	if check {
		if err := e.srv.fsm.State().CheckQuotaUsage(args.ID, args.Limits); err != nil {
			return err
		}
	}
	l, _ := e.srv.ClusterFSMLevel()
	index, err := e.srv.apply(structs.QuotaUpdateType, &structs.QuotaEntry{Scope: args.Scope, ID: args.ID, Set: args.Limits,
		CheckUsage: check && l >= structs.FSMLevelQuotaUsageCheck})
	if err != nil {
		return err
	}
	state := e.srv.fsm.State()
	if args.Scope == structs.QuotaScopeClass {
		reply.Limits = state.QuotaClassLimits(nil, args.ID)
	} else {
		reply.Limits = state.QuotaLimits(nil, args.ID)
	}
	reply.Index = index
	return nil
}

// Delete drops a project's own limits: the defaults apply again.
func (e *Quota) Delete(args *structs.QuotaDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Quota.Delete", args, args, reply); done {
		return err
	}
	if args.ProjectID == "" {
		return structs.Errorf(structs.KindInvalid, "project id is required")
	}
	index, err := e.srv.apply(structs.QuotaUpdateType, &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: args.ProjectID, Delete: true})
	reply.Index = index
	return err
}
