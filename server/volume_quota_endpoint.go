package server

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// QuotaGet reads a project's volume limits (the defaults for "") and,
// with Usage, what it uses.
func (e *Volume) QuotaGet(args *structs.VolumeQuotaRequest, reply *structs.VolumeQuotaResponse) error {
	if done, err := e.srv.forward("Volume.QuotaGet", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		if args.Defaults || args.ProjectID == "" {
			reply.Limits, reply.Usage = state.VolumeQuotaLimits(ws, ""), nil
			return reply.Limits, state.Index(fsm.TableQuotas), nil
		}
		reply.Limits = state.VolumeQuotaLimits(ws, args.ProjectID)
		reply.Usage = nil
		if args.Usage {
			used, err := state.VolumeQuotaUsage(ws, args.ProjectID)
			if err != nil {
				return nil, 0, err
			}
			reply.Usage = used
		}
		index := max(state.Index(fsm.TableQuotas), state.Index(fsm.TableVolumes), state.Index(fsm.TableVolumeSnapshots))
		return reply.Limits, index, nil
	})
}

// QuotaUpdate sets a project's volume limits, or the default class's.
func (e *Volume) QuotaUpdate(args *structs.VolumeQuotaUpdateRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Volume.QuotaUpdate", args, args, reply); done {
		return err
	}
	entry := &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: args.ProjectID, Set: args.Limits}
	if args.Class != "" {
		entry.Scope, entry.ID = structs.QuotaScopeClass, args.Class
	}
	if entry.ID == "" {
		return structs.Errorf(structs.KindInvalid, "a volume quota update needs a project or a class")
	}
	for k, v := range args.Limits {
		if _, ok := structs.VolumeDefaultQuotas[k]; !ok {
			return structs.Errorf(structs.KindInvalid, "Invalid input received: Bad key(s) in quota set: %s", k)
		}
		if v < structs.QuotaUnlimited {
			return structs.Errorf(structs.KindInvalid, "Invalid input received: Quota limit %d for %s must be -1 or greater.", v, k)
		}
	}
	index, err := e.srv.apply(structs.VolumeQuotaUpdateType, entry)
	reply.Index = index
	return err
}
