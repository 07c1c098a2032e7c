package server

import (
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// UpdateComputeAttachment changes the Compute API's attachment of a
// volume to an instance (Nova 2.85's update that keeps the volume:
// delete_on_termination). The FSM finds the attachment in the entry, so
// a detach racing the update makes it Nova's 404.
func (e *Volume) UpdateComputeAttachment(args *structs.ComputeAttachmentUpdateRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Volume.UpdateComputeAttachment", args, args, reply); done {
		return err
	}
	inst, err := e.srv.fsm.State().InstanceByID(nil, args.InstanceID)
	if err != nil {
		return err
	}
	if inst == nil || (args.ProjectID != "" && inst.ProjectID != args.ProjectID) {
		return structs.Errorf(structs.KindNotFound, "Instance %s could not be found.", args.InstanceID)
	}
	entry := &structs.ComputeAttachmentUpdateEntry{VolumeID: args.VolumeID, InstanceID: inst.ID,
		DeleteOnTermination: args.DeleteOnTermination, At: time.Now().UnixNano()}
	index, err := e.srv.apply(structs.ComputeAttachmentUpdateType, entry)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}
