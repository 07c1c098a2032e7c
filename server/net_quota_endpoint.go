package server

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Quotas reads a project's network quotas, and its usage when asked: a
// project reads its own, admins any.
func (e *Net) Quotas(args *structs.NetQuotaRequest, reply *structs.NetQuotaResponse) error {
	if done, err := e.srv.forward("Net.Quotas", args, args, reply); done {
		return err
	}
	if args.ProjectID != "" && !owns(args.Caller, args.ProjectID) {
		return policyError("get_quota")
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		reply.Limits = state.NetworkQuotaLimits(ws, args.ProjectID)
		reply.Usage = nil
		if args.Usage && args.ProjectID != "" {
			used, err := state.NetworkQuotaUsage(ws, args.ProjectID)
			if err != nil {
				return nil, 0, err
			}
			reply.Usage = used
		}
		return reply.Limits, max(state.Index(fsm.TableQuotas), netIndex(state)), nil
	})
}

// UpdateQuotas sets or drops a project's network quotas (admins).
func (e *Net) UpdateQuotas(args *structs.NetQuotaUpdateRequest, reply *structs.NetQuotaResponse) error {
	if done, err := e.srv.forward("Net.UpdateQuotas", args, args, reply); done {
		return err
	}
	if !args.Caller.Admin {
		return policyError("update_quota")
	}
	if args.ProjectID == "" {
		return structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "A project is required.")
	}
	for k, v := range args.Limits {
		if _, ok := structs.NetworkDefaultQuotas[k]; !ok {
			return structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidInput, "Invalid input for operation: Unrecognized quota resource %s.", k)
		}
		if v < structs.QuotaUnlimited {
			return structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidInput, "Invalid input for %s. Reason: '%d' should be >= -1.", k, v)
		}
	}
	var set map[string]int64
	if args.Delete {
		// Only the network resources go back to the defaults' current
		// values; a project's compute quotas stay.
		set = map[string]int64{}
		for r, v := range e.srv.fsm.State().NetworkQuotaLimits(nil, "") {
			set[r] = v
		}
	} else {
		set = args.Limits
	}
	index, err := e.srv.apply(structs.QuotaUpdateType, &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: args.ProjectID, Set: set})
	if err != nil {
		return err
	}
	reply.Index = index
	reply.Limits = e.srv.fsm.State().NetworkQuotaLimits(nil, args.ProjectID)
	return nil
}
