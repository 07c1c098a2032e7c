package structs

import (
	"maps"
	"slices"
)

// Volume statuses, Cinder's. A volume is created in creating, becomes
// available once its storage host made it, and moves through the
// attach statuses (reserved, attaching, in-use, detaching) as instances
// use it; deleting, extending and the error statuses are the storage
// host's work in progress and its failures.
const (
	VolumeCreating      = "creating"
	VolumeAvailable     = "available"
	VolumeReserved      = "reserved"
	VolumeAttaching     = "attaching"
	VolumeInUse         = "in-use"
	VolumeDetaching     = "detaching"
	VolumeDeleting      = "deleting"
	VolumeError         = "error"
	VolumeErrorDeleting = "error_deleting"
	VolumeExtending     = "extending"
	VolumeErrorExtend   = "error_extending"
	VolumeMaintenance   = "maintenance"
	// VolumeUploading is os-volume_upload_image at work: the storage
	// host copies the volume into an image, then the volume goes back
	// to in-use if it has attachments, else available.
	VolumeUploading = "uploading"
)

// volumeTransitions is Cinder's volume status machine: the statuses each
// status may move to in the normal course (an admin's os-reset_status
// and os-force_delete step outside it). The attach statuses are
// reserved → attaching → in-use → detaching → available.
var volumeTransitions = map[string][]string{
	VolumeCreating:      {VolumeAvailable, VolumeError},
	VolumeAvailable:     {VolumeReserved, VolumeAttaching, VolumeExtending, VolumeDeleting, VolumeMaintenance, VolumeUploading},
	VolumeReserved:      {VolumeAttaching, VolumeAvailable},
	VolumeAttaching:     {VolumeInUse, VolumeAvailable, VolumeError},
	VolumeInUse:         {VolumeDetaching, VolumeExtending, VolumeUploading},
	VolumeDetaching:     {VolumeAvailable, VolumeInUse},
	VolumeExtending:     {VolumeAvailable, VolumeInUse, VolumeErrorExtend},
	VolumeError:         {VolumeDeleting},
	VolumeErrorExtend:   {VolumeDeleting, VolumeExtending},
	VolumeErrorDeleting: {VolumeDeleting},
	VolumeDeleting:      {VolumeErrorDeleting},
	VolumeMaintenance:   {VolumeAvailable},
	VolumeUploading:     {VolumeAvailable, VolumeInUse},
}

// VolumeTransitionAllowed reports whether a volume may move from one
// status to another in the normal course (staying put is allowed).
func VolumeTransitionAllowed(from, to string) bool {
	return from == to || slices.Contains(volumeTransitions[from], to)
}

// VolumeStatuses lists every status os-reset_status may set.
var VolumeStatuses = []string{VolumeCreating, VolumeAvailable, VolumeReserved, VolumeAttaching,
	VolumeInUse, VolumeDetaching, VolumeDeleting, VolumeError, VolumeErrorDeleting,
	VolumeExtending, VolumeErrorExtend, VolumeMaintenance, VolumeUploading}

// Volume snapshot statuses, Cinder's.
const (
	SnapshotCreating      = "creating"
	SnapshotAvailable     = "available"
	SnapshotDeleting      = "deleting"
	SnapshotError         = "error"
	SnapshotErrorDeleting = "error_deleting"
)

// Volume quota resources (Cinder's names), kept beside the compute and
// network quotas in the same quota sets.
const (
	QuotaVolumes            = "volumes"
	QuotaGigabytes          = "gigabytes"
	QuotaVolumeSnapshots    = "snapshots"
	QuotaPerVolumeGigabytes = "per_volume_gigabytes"
)

// VolumeDefaultQuotas are Cinder's default quotas. Only volumes,
// gigabytes (volumes' and snapshots' sizes together), snapshots and
// per_volume_gigabytes are enforced; the others are shown for
// compatibility.
var VolumeDefaultQuotas = map[string]int64{
	QuotaVolumes:            10,
	QuotaGigabytes:          1000,
	QuotaVolumeSnapshots:    10,
	QuotaPerVolumeGigabytes: -1,
	"backups":               10,
	"backup_gigabytes":      1000,
	"groups":                10,
}

// VolumeQuotaResources lists the volume quota resources, sorted.
func VolumeQuotaResources() []string {
	return slices.Sorted(maps.Keys(VolumeDefaultQuotas))
}

// DefaultVolumeTypeName is the volume type every cluster has, Cinder's
// __DEFAULT__.
const DefaultVolumeTypeName = "__DEFAULT__"

// DefaultVolumeTypeID is __DEFAULT__'s fixed id, so every server and
// every snapshot agree on it without an entry that creates it.
const DefaultVolumeTypeID = "00000000-0000-4000-8000-00000000d0f7"

// Volume backends.
const (
	// VolumeBackendFile keeps volumes as qcow2 or raw files in a storage
	// agent's pool directory.
	VolumeBackendFile = "file"
)

// Volume is a block device a project owns: its record in the servers'
// state, which the storage host named by Host drives to its Status.
type Volume struct {
	ID          string
	ProjectID   string
	UserID      string
	Name        string
	Description string
	// SizeGB is the volume's size in GiB.
	SizeGB int
	Status string
	// VolumeTypeID names the volume's type (DefaultVolumeTypeID unless
	// one was asked for).
	VolumeTypeID     string
	AvailabilityZone string
	Bootable         bool
	Metadata         map[string]string
	// The volume's source, at most one: an image, a volume snapshot or
	// another volume (a clone).
	ImageID        string
	SnapshotID     string
	SourceVolumeID string
	// ImageHash and ImageSize identify the image's data for the storage
	// host's image cache (create from image).
	ImageHash string
	ImageSize int64

	// Host is the storage host the leader chose; Backend what keeps the
	// volume there (VolumeBackendFile) and Format its file format
	// (qcow2, raw).
	Host    string
	Backend string
	Format  string
	// ProviderLocation is where the storage host keeps the volume (the
	// file's path), reported once it exists.
	ProviderLocation string
	// ErrorMessage is the storage host's last failure, for an error
	// status.
	ErrorMessage string

	// Attachments are the instances using the volume; empty until
	// attachments come (attach_status detached).
	Attachments []*VolumeAttachment
	// Upload is the image the storage host copies the volume into
	// while it is uploading; nil otherwise.
	Upload      *VolumeUpload `json:",omitempty"`
	Multiattach bool
	// MadeFor is set on a volume a server create made, until it is
	// attached to that server or the build ended (VolumeMadeFor).
	MadeFor *VolumeMadeFor `json:",omitempty"`

	// CreatedAt and UpdatedAt are unix nanoseconds chosen before the
	// entry is proposed.
	CreatedAt int64
	UpdatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// VolumeAttachment is one instance's use of a volume.
type VolumeAttachment struct {
	ID         string
	InstanceID string
	// Host is the compute host the instance runs on (empty while it is
	// shelved offloaded: it runs nowhere, the attachment is kept).
	Host string
	// Exported says that the instance on Host reaches the volume
	// through the storage host's NBD export of the attachment even when
	// Host is the storage host itself: a move brought it there, and a
	// move's destination always attaches the export, since the export
	// may still serve the move's other host, and the file cannot be
	// opened by two processes at once.
	Exported bool `json:",omitempty"`
	// MoveHost is the other host that reaches the volume while the
	// instance moves: the destination of a move under way (which
	// attaches the export), or the source of a resize or cold migration
	// waiting for its confirmation (a revert starts the instance there
	// again, with the attachment it had: MoveExported says whether that
	// was the export).
	MoveHost     string `json:",omitempty"`
	MoveExported bool   `json:",omitempty"`
	// Device is the guest's device (/dev/vdb) and Mountpoint Cinder's
	// name for the same.
	Device string
	// Mode is rw or ro.
	Mode string
	// ConnectionInfo is what the compute host needs to reach the
	// volume (an NBD export, an RBD image).
	ConnectionInfo map[string]string
	// AttachedAt is set once the instance's agent attached the volume
	// (zero while attaching).
	AttachedAt int64
	// Tag is the device tag the user gave (Nova 2.49+) and
	// DeleteOnTermination whether deleting the instance deletes the
	// volume (2.79+).
	Tag                 string `json:",omitempty"`
	DeleteOnTermination bool   `json:",omitempty"`
	// External marks an attachment made through the Block Storage API's
	// attachments (3.27+) rather than by the Compute API: a record its
	// caller drives (reserved, attaching with a connector, attached once
	// completed), which no agent acts upon. Only such attachments may be
	// changed or deleted there.
	External bool `json:",omitempty"`
	// Connector is what the caller said of the host that attaches
	// (Cinder's connector), for an external attachment.
	Connector map[string]string `json:",omitempty"`
}

// Attachment statuses, Cinder's attach_status of one attachment.
const (
	AttachmentReserved  = "reserved"
	AttachmentAttaching = "attaching"
	AttachmentAttached  = "attached"
)

// Status is the attachment's attach_status: attached once attached,
// attaching while an agent (or, for an external one, its caller with a
// connector) attaches it, reserved before.
func (a *VolumeAttachment) Status() string {
	switch {
	case a.AttachedAt != 0:
		return AttachmentAttached
	case a.External && a.Connector == nil:
		return AttachmentReserved
	}
	return AttachmentAttaching
}

// AttachStatus is Cinder's attach_status: attached while any instance
// uses the volume.
func (v *Volume) AttachStatus() string {
	if len(v.Attachments) > 0 {
		return "attached"
	}
	return "detached"
}

// Copy returns a deep copy.
func (v *Volume) Copy() *Volume {
	if v == nil {
		return nil
	}
	c := *v
	c.Metadata = maps.Clone(v.Metadata)
	if v.MadeFor != nil {
		m := *v.MadeFor
		c.MadeFor = &m
	}
	if v.Upload != nil {
		u := *v.Upload
		c.Upload = &u
	}
	if v.Attachments != nil {
		c.Attachments = make([]*VolumeAttachment, len(v.Attachments))
		for i, a := range v.Attachments {
			ac := *a
			ac.ConnectionInfo = maps.Clone(a.ConnectionInfo)
			ac.Connector = maps.Clone(a.Connector)
			c.Attachments[i] = &ac
		}
	}
	return &c
}

// VolumeSnapshot is a point-in-time copy of a volume, kept on the
// volume's storage host.
type VolumeSnapshot struct {
	ID          string
	ProjectID   string
	UserID      string
	VolumeID    string
	Name        string
	Description string
	SizeGB      int
	Status      string
	Metadata    map[string]string
	// Host is the storage host (the volume's) that keeps the snapshot.
	Host             string
	ProviderLocation string
	ErrorMessage     string
	CreatedAt        int64
	UpdatedAt        int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (s *VolumeSnapshot) Copy() *VolumeSnapshot {
	if s == nil {
		return nil
	}
	c := *s
	c.Metadata = maps.Clone(s.Metadata)
	return &c
}

// VolumeType is a class of volumes (Cinder's volume type): its extra
// specs choose the backend (volume_backend_name).
type VolumeType struct {
	ID          string
	Name        string
	Description string
	IsPublic    bool
	ExtraSpecs  map[string]string
	// Projects may use the type while it is private
	// (os-volume-type-access); only VolumeTypeAccessEntry changes it.
	Projects []string `json:",omitempty"`

	CreateIndex uint64
	ModifyIndex uint64
}

// DefaultVolumeType is the built-in __DEFAULT__ type, which the state
// answers without storing it.
func DefaultVolumeType() *VolumeType {
	return &VolumeType{ID: DefaultVolumeTypeID, Name: DefaultVolumeTypeName,
		Description: "Default Volume Type", IsPublic: true, ExtraSpecs: map[string]string{}}
}
