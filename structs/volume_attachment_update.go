package structs

// ComputeAttachmentUpdateRequest is the Compute API's update of a
// server's volume attachment that keeps the volume (Nova 2.85's PUT
// os-volume_attachments/{volume_id} naming the same volume): only
// delete_on_termination may change, as in Nova. ProjectID, when set,
// must own the instance.
type ComputeAttachmentUpdateRequest struct {
	ProjectID  string
	InstanceID string
	VolumeID   string
	// DeleteOnTermination, when set, is the attachment's new flag; nil
	// leaves it (an update that changes nothing still succeeds).
	DeleteOnTermination *bool
	WriteRequest
}

// ComputeAttachmentUpdateEntry is the Raft entry of a
// ComputeAttachmentUpdateRequest: the attachment of VolumeID to
// InstanceID gets the new flag.
type ComputeAttachmentUpdateEntry struct {
	VolumeID            string
	InstanceID          string
	DeleteOnTermination *bool
	At                  int64
}
