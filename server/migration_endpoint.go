package server

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Migration is the endpoint for migration records (os-migrations).
type Migration struct{ srv *Server }

// List reads migrations, all or one instance's, by id.
func (e *Migration) List(args *structs.MigrationListRequest, reply *structs.MigrationListResponse) error {
	if done, err := e.srv.forward("Migration.List", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		var err error
		if args.InstanceID != "" {
			reply.Migrations, err = state.MigrationsByInstance(ws, args.InstanceID)
		} else {
			reply.Migrations, err = state.Migrations(ws)
		}
		return reply.Migrations, state.Index(fsm.TableMigrations), err
	})
}
