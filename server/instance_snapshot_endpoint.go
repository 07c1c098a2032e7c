package server

import (
	"github.com/stratus-cloud/stratus/structs"
)

// SnapshotProgress records an agent's report that a snapshot reached a
// step (its instance's task_state goes image_snapshot →
// image_pending_upload → image_uploading); the FSM ignores reports that
// are not of the instance's current snapshot.
func (e *Instance) SnapshotProgress(args *structs.SnapshotProgressRequest, reply *structs.GenericResponse) error {
	if err := e.srv.authenticateNodeAllocs(args.AuthToken, args.AllocID); err != nil {
		return err
	}
	if done, err := e.srv.forward("Instance.SnapshotProgress", args, args, reply); done {
		return err
	}
	if args.InstanceID == "" || args.AllocID == "" {
		return structs.Errorf(structs.KindInvalid, "instance and allocation ids are required")
	}
	index, err := e.srv.apply(structs.SnapshotProgressType, &structs.SnapshotProgressEntry{InstanceID: args.InstanceID,
		AllocID: args.AllocID, ActionSeq: args.ActionSeq, TaskState: args.TaskState})
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}
