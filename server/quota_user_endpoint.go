package server

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// GetUser reads a user's effective limits in a project (its own, else
// the project's) and, with Usage, what the user uses there.
func (e *Quota) GetUser(args *structs.UserQuotaGetRequest, reply *structs.QuotaResponse) error {
	if done, err := e.srv.forward("Quota.GetUser", args, args, reply); done {
		return err
	}
	if args.ProjectID == "" || args.UserID == "" {
		return structs.Errorf(structs.KindInvalid, "project id and user id are required")
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		reply.Limits, reply.Usage = state.UserQuotaLimits(ws, args.ProjectID, args.UserID), nil
		index := max(state.Index(fsm.TableQuotas), state.Index(fsm.TableUserQuotas))
		if args.Usage {
			used, err := state.UserQuotaUsage(ws, args.ProjectID, args.UserID)
			if err != nil {
				return nil, 0, err
			}
			reply.Usage = used
			index = max(index, state.Index(fsm.TableInstances), state.Index(fsm.TableServerGroups), state.Index(fsm.TableKeyPairs))
		}
		return reply.Limits, index, nil
	})
}

// UpdateUser sets a user's limits in a project and answers with the
// user's effective limits. As in Nova, unless Force is set each limit
// must be at least what the user uses and at most what the project
// leaves the user: the project's limit less the other users' usage
// (-1, unlimited, is above everything).
func (e *Quota) UpdateUser(args *structs.UserQuotaUpdateRequest, reply *structs.QuotaResponse) error {
	if done, err := e.srv.forward("Quota.UpdateUser", args, args, reply); done {
		return err
	}
	if args.ProjectID == "" || args.UserID == "" {
		return structs.Errorf(structs.KindInvalid, "project id and user id are required")
	}
	for k, v := range args.Limits {
		if _, ok := structs.DefaultQuotas[k]; !ok {
			return structs.Errorf(structs.KindInvalid, "unknown quota resource %q", k)
		}
		if v < structs.QuotaUnlimited {
			return structs.Errorf(structs.KindInvalid, "quota %s must be -1 (unlimited) or more, not %d", k, v)
		}
	}
	if !args.Force {
		if err := e.checkUserLimits(args); err != nil {
			return err
		}
	}
	index, err := e.srv.apply(structs.UserQuotaUpdateType, &structs.UserQuotaEntry{ProjectID: args.ProjectID, UserID: args.UserID, Set: args.Limits})
	if err != nil {
		return err
	}
	reply.Limits = e.srv.fsm.State().UserQuotaLimits(nil, args.ProjectID, args.UserID)
	reply.Index = index
	return nil
}

// checkUserLimits applies Nova's settable range to each new limit.
func (e *Quota) checkUserLimits(args *structs.UserQuotaUpdateRequest) error {
	state := e.srv.fsm.State()
	projectLimits := state.QuotaLimits(nil, args.ProjectID)
	projectUsed, err := state.QuotaUsage(nil, args.ProjectID, args.UserID)
	if err != nil {
		return err
	}
	userUsed, err := state.UserQuotaUsage(nil, args.ProjectID, args.UserID)
	if err != nil {
		return err
	}
	for _, k := range structs.QuotaResources() {
		v, ok := args.Limits[k]
		if !ok || v < 0 {
			continue
		}
		if v < userUsed[k] {
			return structs.Errorf(structs.KindInvalid,
				"Quota limit %d for %s must be greater than or equal to already used and reserved %d.", v, k, userUsed[k])
		}
		limit := projectLimits[k]
		if limit < 0 {
			continue
		}
		maximum := limit - projectUsed[k] + userUsed[k]
		if k == structs.QuotaKeyPairs {
			// Key pairs are counted per user only.
			maximum = limit
		}
		if v > maximum {
			return structs.Errorf(structs.KindInvalid, "Quota limit %d for %s must be less than or equal to %d.", v, k, maximum)
		}
	}
	return nil
}

// DeleteUser drops a user's own limits in a project: the project's
// apply to the user again.
func (e *Quota) DeleteUser(args *structs.UserQuotaDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Quota.DeleteUser", args, args, reply); done {
		return err
	}
	if args.ProjectID == "" || args.UserID == "" {
		return structs.Errorf(structs.KindInvalid, "project id and user id are required")
	}
	index, err := e.srv.apply(structs.UserQuotaUpdateType, &structs.UserQuotaEntry{ProjectID: args.ProjectID, UserID: args.UserID, Delete: true})
	reply.Index = index
	return err
}
