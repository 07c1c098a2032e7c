package structs

import (
	"encoding/json"
	"fmt"
)

// Instance operations that attach and detach volumes (Nova's
// os-volume_attachments), carried out by the instance's own agent.
const (
	OpAttachVolume = "attach_volume"
	OpDetachVolume = "detach_volume"
)

// Allocation actions of the attach operations: the agent hot-plugs or
// unplugs the volume that ActionArg (a VolumeActionArg) describes.
const (
	ActionAttachVolume = "attach_volume"
	ActionDetachVolume = "detach_volume"
)

// VolumeActionArg is what an attach or detach action asks of the
// instance's agent: which volume, where its data is (a file on this
// host, or an NBD export of its storage host), and the guest device
// asked for.
type VolumeActionArg struct {
	VolumeID     string
	AttachmentID string
	// Path is the volume's file (Volume.ProviderLocation) on the
	// instance's host.
	Path   string
	Device string `json:",omitempty"`
	// NBD, when set, is the storage host's export of this attachment:
	// the volume is kept on another host, and Path is empty.
	NBD *VolumeExport `json:",omitempty"`
	// RBD, when set, is the volume's Ceph image as "pool/image"
	// (VolumeBackendRBD): the instance's host opens it with its own
	// Ceph settings, and Path is empty.
	RBD string `json:",omitempty"`
	// FromVolumeID is, for a swap, the attached volume whose disk moves
	// onto VolumeID (at Path).
	FromVolumeID string `json:",omitempty"`
}

// VolumeExport is where a storage host serves one attachment of a
// volume over NBD (with TLS).
type VolumeExport struct {
	// Name is the export's name, unique to the attachment
	// (VolumeExportName).
	Name string
	// Address is the storage host's NBD server, host:port.
	Address string
}

// VolumeExportName is the NBD export name of one attachment of a
// volume: the storage agent serves it under this name while the
// attachment lasts, and the instance's agent opens it by this name, so
// two attachments never share an export.
func VolumeExportName(volumeID, attachmentID string) string {
	return "volume-" + volumeID + "-" + attachmentID
}

// String encodes the argument for Allocation.ActionArg.
func (a VolumeActionArg) String() string {
	b, _ := json.Marshal(a) // a struct of strings always encodes
	return string(b)
}

// ParseVolumeActionArg decodes Allocation.ActionArg of an attach or
// detach action.
func ParseVolumeActionArg(s string) (VolumeActionArg, error) {
	var a VolumeActionArg
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return a, fmt.Errorf("volume action argument %q: %w", s, err)
	}
	if a.VolumeID == "" {
		return a, fmt.Errorf("volume action argument %q names no volume", s)
	}
	return a, nil
}

// AttachmentOf returns the volume's attachment to the instance, or nil.
func (v *Volume) AttachmentOf(instanceID string) *VolumeAttachment {
	for _, a := range v.Attachments {
		if a.InstanceID == instanceID {
			return a
		}
	}
	return nil
}

// VolumeAttachRequest is the volume part of an attach or detach
// operation (Nova's volumeAttachment body).
type VolumeAttachRequest struct {
	VolumeID string
	// AttachmentID is the new attachment's id, chosen by the leader.
	AttachmentID        string `json:",omitempty"`
	Device              string `json:",omitempty"`
	Tag                 string `json:",omitempty"`
	DeleteOnTermination bool   `json:",omitempty"`
	// NewVolumeID is, for a swap_volume, the volume that takes
	// VolumeID's place.
	NewVolumeID string `json:",omitempty"`
}

// Operations of VolumeAttachmentEntry, the Block Storage API's
// attachment calls.
const (
	AttachmentCreate   = "create"
	AttachmentUpdate   = "update"
	AttachmentComplete = "complete"
	AttachmentDelete   = "delete"
)

// Operations of VolumeAttachmentEntry for Cinder's older attach actions
// (POST /volumes/{id}/action), which clients drove before the
// attachments API: reserve and unreserve the volume, attach (record an
// attachment the caller made) and detach, and begin or roll back a
// detach. Like the attachments API's, they keep records the caller
// drives; no agent acts on them.
const (
	AttachmentReserve        = "reserve"
	AttachmentUnreserve      = "unreserve"
	AttachmentLegacyAttach   = "legacy_attach"
	AttachmentLegacyDetach   = "legacy_detach"
	AttachmentBeginDetaching = "begin_detaching"
	AttachmentRollDetaching  = "roll_detaching"
)

// LegacyAttachmentOp reports whether op is one of Cinder's older attach
// actions.
func LegacyAttachmentOp(op string) bool {
	switch op {
	case AttachmentReserve, AttachmentUnreserve, AttachmentLegacyAttach, AttachmentLegacyDetach,
		AttachmentBeginDetaching, AttachmentRollDetaching:
		return true
	}
	return false
}

// VolumeAttachmentEntry changes a volume's external attachments (the
// Block Storage API's attachments, 3.27+): create reserves the volume
// for Attachment (attaching at once when it has a connector), update
// gives a reserved attachment its connector, complete marks it
// attached (the volume in-use), delete removes it (the volume available
// again when it was the last). ProjectID, when set, must own the
// volume.
type VolumeAttachmentEntry struct {
	Op         string
	VolumeID   string
	ProjectID  string
	Attachment *VolumeAttachment
	At         int64
}

// VolumeAttachmentRequest is a Block Storage API attachment call in
// ProjectID (a non-admin's own): Op on the attachment AttachmentID of
// VolumeID (create names InstanceID and, when it has one, Connector and
// Mode; update its Connector). The servers choose a new attachment's id
// and the time.
type VolumeAttachmentRequest struct {
	ProjectID    string
	Op           string
	VolumeID     string
	AttachmentID string
	InstanceID   string
	Connector    map[string]string
	Mode         string
	// HostName and Mountpoint are what os-attach says of an attachment
	// its caller made (to a host rather than an instance, and where).
	HostName   string `json:",omitempty"`
	Mountpoint string `json:",omitempty"`
	WriteRequest
}

// VolumeAttachmentResponse carries the volume an attachment call left.
type VolumeAttachmentResponse struct {
	Volume       *Volume
	AttachmentID string
	QueryMeta
}
