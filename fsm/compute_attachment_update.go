package fsm

import (
	"fmt"

	"github.com/stratus-cloud/stratus/structs"
)

// The Compute API's update of a volume attachment that keeps the volume
// (Nova 2.85) changes only the attachment's delete_on_termination, the
// one field Nova lets it change; purging the instance reads the flag
// from the attachment (releaseInstanceVolumes).

func init() {
	registerApply(structs.ComputeAttachmentUpdateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.ComputeAttachmentUpdateEntry
		if err := decodeBody(structs.ComputeAttachmentUpdateType, body, &e); err != nil {
			return err
		}
		return s.ComputeAttachmentUpdate(index, &e)
	})
}

// ComputeAttachmentUpdate applies an update of the Compute API's
// attachment of e.VolumeID to e.InstanceID; a volume not attached to
// the instance by the Compute API is Nova's VolumeBDMNotFound.
func (s *StateStore) ComputeAttachmentUpdate(index uint64, e *structs.ComputeAttachmentUpdateEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	raw, err := first[*structs.Volume](txn, nil, TableVolumes, "id", e.VolumeID)
	if err != nil {
		return err
	}
	var att *structs.VolumeAttachment
	if raw != nil {
		att = raw.AttachmentOf(e.InstanceID)
	}
	if att == nil || att.External {
		return structs.Errorf(structs.KindNotFound, "No volume Block Device Mapping with id %s.", e.VolumeID)
	}
	if e.DeleteOnTermination == nil || *e.DeleteOnTermination == att.DeleteOnTermination {
		return nil
	}
	v := raw.Copy()
	v.AttachmentOf(e.InstanceID).DeleteOnTermination = *e.DeleteOnTermination
	v.ModifyIndex, v.UpdatedAt = index, e.At
	if err := txn.Insert(TableVolumes, v); err != nil {
		return fmt.Errorf("volume %s attachment: %w", v.ID, err)
	}
	return commitAt(txn, index, TableVolumes)
}
