package server

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Actions reads an instance's actions (os-instance-actions), newest
// first, or one of them. They outlive the instance.
func (e *Instance) Actions(args *structs.InstanceActionListRequest, reply *structs.InstanceActionListResponse) error {
	if done, err := e.srv.forward("Instance.Actions", args, args, reply); done {
		return err
	}
	if args.InstanceID == "" {
		return structs.Errorf(structs.KindInvalid, "an instance id is required")
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		reply.Actions = nil
		if args.RequestID != "" {
			a, err := state.InstanceActionByID(ws, args.InstanceID, args.RequestID)
			if err != nil {
				return nil, 0, err
			}
			if a != nil {
				reply.Actions = []*structs.InstanceAction{a}
			}
		} else {
			acts, err := state.InstanceActions(ws, args.InstanceID)
			if err != nil {
				return nil, 0, err
			}
			reply.Actions = acts
		}
		return reply.Actions, state.Index(fsm.TableInstanceActions), nil
	})
}
