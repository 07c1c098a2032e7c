package server

import (
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

// Attachment carries out a Block Storage API attachment call (create,
// update, complete, delete; fsm/volume_attachments.go): it finds the
// volume of an attachment named by id alone, draws a new attachment's
// id, and commits the change, which the FSM checks against the volume's
// status.
func (e *Volume) Attachment(args *structs.VolumeAttachmentRequest, reply *structs.VolumeAttachmentResponse) error {
	if done, err := e.srv.forward("Volume.Attachment", args, args, reply); done {
		return err
	}
	entry := structs.VolumeAttachmentEntry{Op: args.Op, VolumeID: args.VolumeID, ProjectID: args.ProjectID,
		Attachment: &structs.VolumeAttachment{ID: args.AttachmentID, InstanceID: args.InstanceID, Mode: args.Mode,
			Connector: args.Connector},
		At: time.Now().UnixNano()}
	switch args.Op {
	case structs.AttachmentCreate:
		if args.VolumeID == "" {
			return structs.Errorf(structs.KindInvalid, "Invalid input received: an attachment needs a volume_uuid")
		}
		entry.Attachment.ID = uuid.NewString()
	case structs.AttachmentLegacyAttach:
		if args.VolumeID == "" {
			return structs.Errorf(structs.KindInvalid, "Invalid input received: os-attach needs a volume")
		}
		entry.Attachment.ID = uuid.NewString()
		entry.Attachment.Host, entry.Attachment.Device = args.HostName, args.Mountpoint
	case structs.AttachmentReserve, structs.AttachmentUnreserve, structs.AttachmentBeginDetaching,
		structs.AttachmentRollDetaching, structs.AttachmentLegacyDetach:
		if args.VolumeID == "" {
			return structs.Errorf(structs.KindInvalid, "Invalid input received: the action needs a volume")
		}
	case structs.AttachmentUpdate, structs.AttachmentComplete, structs.AttachmentDelete:
		if entry.VolumeID == "" {
			id, err := e.attachmentVolume(args.ProjectID, args.AttachmentID)
			if err != nil {
				return err
			}
			entry.VolumeID = id
		}
	default:
		return structs.Errorf(structs.KindInvalid, "unknown attachment operation %q", args.Op)
	}
	if c := args.Connector; c != nil {
		entry.Attachment.Host = c["host"]
		entry.Attachment.Device = c["mountpoint"]
		if entry.Attachment.Mode == "" {
			entry.Attachment.Mode = c["mode"]
		}
	}
	index, err := e.srv.apply(structs.VolumeAttachmentType, &entry)
	if err != nil {
		return err
	}
	v, err := e.srv.fsm.State().Volume(nil, entry.VolumeID)
	if err != nil {
		return err
	}
	reply.Volume, reply.AttachmentID, reply.Index = v, entry.Attachment.ID, index
	return nil
}

// attachmentVolume finds the volume (of projectID, any when empty) that
// has the attachment.
func (e *Volume) attachmentVolume(projectID, attachmentID string) (string, error) {
	vols, err := e.srv.fsm.State().Volumes(nil, projectID)
	if err != nil {
		return "", err
	}
	for _, v := range vols {
		for _, a := range v.Attachments {
			if a.ID == attachmentID {
				return v.ID, nil
			}
		}
	}
	return "", structs.Errorf(structs.KindNotFound, "VolumeAttachment %s could not be found.", attachmentID)
}
