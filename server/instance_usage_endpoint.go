package server

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Usage reads what os-simple-tenant-usage reports on, all projects' or
// one's: the live instances and the usage records of deleted ones, from
// one snapshot. The Compute API clips them to the report's period.
func (e *Instance) Usage(args *structs.InstanceUsageRequest, reply *structs.InstanceUsageResponse) error {
	if done, err := e.srv.forward("Instance.Usage", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		live, deleted, index, err := state.UsageSources(ws, args.ProjectID)
		if err != nil {
			return nil, 0, err
		}
		reply.Instances, reply.Deleted = live, deleted
		return reply, index, nil
	})
}
