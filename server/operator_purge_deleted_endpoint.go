package server

import (
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// PurgeDeleted purges now the records of the instances deleted before
// the request's cut-off, whatever the configured retention, through the
// same Raft entry as the leader's duty (cloudctl operator purge-deleted,
// as nova-manage db purge --before). Admin only.
func (e *Operator) PurgeDeleted(args *structs.DeletedPurgeRequest, reply *structs.DeletedPurgeResponse) error {
	if done, err := e.srv.forward("Operator.PurgeDeleted", args, args, reply); done {
		return err
	}
	if args.Before <= 0 {
		return structs.Errorf(structs.KindInvalid, "purge-deleted needs a cut-off time (before)")
	}
	purged, entries, index, err := e.srv.purgeDeletedBefore(args.Before, 0)
	reply.Purged, reply.Entries, reply.Index = purged, entries, index
	if err != nil {
		return err
	}
	if purged > 0 {
		e.srv.logger.Info("purged deleted instances' records on request", "instances", purged,
			"deleted_before", time.Unix(0, args.Before).UTC().Format(time.RFC3339))
	}
	return nil
}
