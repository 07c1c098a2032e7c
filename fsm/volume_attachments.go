package fsm

import (
	"fmt"
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

// The Block Storage API's attachments (3.27+) are records their caller
// drives, kept with the attachments the Compute API makes on the
// volume: create reserves the volume (reserved, or attaching with a
// connector), update gives the attachment its connector, complete makes
// it attached and the volume in-use, delete removes it. Each checks the
// volume's status in the entry itself, so two racing callers never both
// reserve a volume. The Compute API's own attachments are read-only
// here: their agent hot-plugged them, and only a detach through the
// Compute API unplugs them.

func init() {
	registerApply(structs.VolumeAttachmentType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.VolumeAttachmentEntry
		if err := decodeBody(structs.VolumeAttachmentType, body, &e); err != nil {
			return err
		}
		return s.VolumeAttachment(index, &e)
	})
}

// VolumeAttachment applies an attachment call to its volume.
func (s *StateStore) VolumeAttachment(index uint64, e *structs.VolumeAttachmentEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	raw, err := first[*structs.Volume](txn, nil, TableVolumes, "id", e.VolumeID)
	if err != nil {
		return err
	}
	if raw == nil || (e.ProjectID != "" && raw.ProjectID != e.ProjectID) {
		return structs.Errorf(structs.KindNotFound, "Volume %s could not be found.", e.VolumeID)
	}
	if e.Attachment == nil {
		e.Attachment = &structs.VolumeAttachment{}
	}
	if e.Attachment.ID == "" && (!structs.LegacyAttachmentOp(e.Op) || e.Op == structs.AttachmentLegacyAttach) {
		return structs.Errorf(structs.KindInvalid, "an attachment call needs an attachment id")
	}
	v := raw.Copy()
	switch {
	case e.Op == structs.AttachmentCreate:
		err = createAttachment(v, e)
	case structs.LegacyAttachmentOp(e.Op):
		err = legacyAttachment(v, e)
	default:
		err = changeAttachment(v, e)
	}
	if err != nil {
		return err
	}
	v.ModifyIndex, v.UpdatedAt = index, e.At
	if err := txn.Insert(TableVolumes, v); err != nil {
		return fmt.Errorf("volume %s attachment: %w", v.ID, err)
	}
	return commitAt(txn, index, TableVolumes)
}

// createAttachment reserves v for a new external attachment.
func createAttachment(v *structs.Volume, e *structs.VolumeAttachmentEntry) error {
	reservable := v.Status == structs.VolumeAvailable || (v.Multiattach && v.Status == structs.VolumeInUse)
	if !reservable {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s status must be available or downloading to reserve, but the current status is %s.", v.ID, v.Status)
	}
	if slices.ContainsFunc(v.Attachments, func(a *structs.VolumeAttachment) bool { return a.ID == e.Attachment.ID }) {
		return structs.Errorf(structs.KindConflict, "attachment %s exists", e.Attachment.ID)
	}
	a := *e.Attachment
	a.External, a.AttachedAt = true, 0
	if a.Mode == "" {
		a.Mode = "rw"
	}
	v.Attachments = append(v.Attachments, &a)
	if v.Status == structs.VolumeAvailable {
		v.Status = structs.VolumeReserved
		if a.Connector != nil {
			v.Status = structs.VolumeAttaching
		}
	}
	return nil
}

// changeAttachment updates, completes or deletes an external
// attachment of v.
func changeAttachment(v *structs.Volume, e *structs.VolumeAttachmentEntry) error {
	i := slices.IndexFunc(v.Attachments, func(a *structs.VolumeAttachment) bool { return a.ID == e.Attachment.ID })
	if i < 0 {
		return structs.Errorf(structs.KindNotFound, "VolumeAttachment %s could not be found.", e.Attachment.ID)
	}
	a := v.Attachments[i]
	if !a.External {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: attachment %s belongs to server %s; attach and detach it through the Compute API", a.ID, a.InstanceID)
	}
	switch e.Op {
	case structs.AttachmentUpdate:
		if a.Connector != nil || e.Attachment.Connector == nil {
			return structs.Errorf(structs.KindInvalid, "Invalid input received: Attachment %s must be reserved and given a connector to be updated.", a.ID)
		}
		a.Connector, a.ConnectionInfo = e.Attachment.Connector, e.Attachment.ConnectionInfo
		a.Host = e.Attachment.Host
		if e.Attachment.Mode != "" {
			a.Mode = e.Attachment.Mode
		}
		if a.Device == "" {
			a.Device = e.Attachment.Device
		}
		if v.Status == structs.VolumeReserved {
			v.Status = structs.VolumeAttaching
		}
	case structs.AttachmentComplete:
		if a.AttachedAt == 0 {
			a.AttachedAt = e.At
		}
		v.Status = structs.VolumeInUse
	case structs.AttachmentDelete:
		v.Attachments = slices.Delete(v.Attachments, i, i+1)
		v.Status = structs.VolumeAvailable
		if slices.ContainsFunc(v.Attachments, func(a *structs.VolumeAttachment) bool { return a.AttachedAt != 0 }) {
			v.Status = structs.VolumeInUse
		} else if len(v.Attachments) > 0 {
			v.Status = structs.VolumeAttaching
		}
	default:
		return structs.Errorf(structs.KindInvalid, "unknown attachment operation %q", e.Op)
	}
	return nil
}
