package structs

import "fmt"

// FSMLevel is a state machine's feature level: which mandatory Raft
// message types a server knows how to apply. Every server advertises its
// level in its gossip metadata, and the leader proposes an entry only when
// every server of the Raft configuration advertises a level that has the
// entry's type (the way Nomad's leader checks ServersMeetMinimumVersion),
// so a server that has not been upgraded yet never meets an entry its FSM
// would refuse. A rolling upgrade therefore never stops an old server.
//
// Adding a mandatory message type:
//
//  1. add a level (FSMLevelX = CurrentFSMLevel+1) and make CurrentFSMLevel
//     that level;
//  2. list the type in messageTypeLevels at the new level (fsm's tests fail
//     for a type its FSM registers that is not listed);
//  3. on the leader, propose it only while the cluster's level allows it
//     (the server refuses the proposal otherwise): fall back to the entries
//     an older server knows, as the create and report batchers do, or
//     refuse the request until the upgrade is done.
//
// A new format version of an existing type (EntryVersion) needs a level
// the same way: an older server would misread it, so the leader must
// keep writing the older version while the cluster's level is lower.
//
// Entries an older server may skip without harm (a purge that a later
// entry repeats, a hint) can instead be proposed with IgnoreUnknownTypeFlag:
// they need no gate, because an FSM skips an ignorable type it does not
// know. Use the flag only when every server's state stays right without
// the entry; anything the state's users read and rely on must be
// mandatory and gated.
type FSMLevel int

// The FSM levels, oldest first.
const (
	// FSMLevelBase is the level of every server that advertises none
	// (builds from before levels existed): all message types but the
	// ones below.
	FSMLevelBase FSMLevel = 1
	// FSMLevelBatched adds the entries that carry several writes: the
	// leader's coalesced creates (InstanceCreateBatch) and agents'
	// reports (AllocClientUpdateBatch), and the leader's purges (proposed
	// as ignorable).
	FSMLevelBatched FSMLevel = 2
	// FSMLevelSegments adds no type: network creates may carry the
	// servers' segmentation config (NetChange.Segments), which an older
	// FSM would ignore and allocate VNIs from 1 instead of the range.
	// Servers stamp a configured range only at this level.
	FSMLevelSegments FSMLevel = 3
	// FSMLevelSameHostResize, which came in the same release, adds no
	// message type but a meaning: an InstanceTask entry's AllowSameHost
	// (a resize that may stay on its host), and the FSM telling a
	// same-host resize's two allocations apart. An older server would
	// drop the flag and could take the source's allocation for the
	// instance's, so the servers set it only once every server has this
	// level.
	FSMLevelSameHostResize = FSMLevelSegments
	// FSMLevelDiskCopy adds no message type but a meaning: an
	// InstanceTask entry's DiskToken, from which the FSM gives a move's
	// destination on another host a DiskSource and its source a
	// DiskExportToken, so the destination copies the instance's disks
	// instead of building fresh ones. An older server would drop the
	// token and hand out a fresh disk, so the servers draw one only
	// once every server has this level. Likewise a shelve entry's
	// ImageID: the FSM snapshots the disk to it before it calls the
	// instance shelved, and an unshelve restores from it.
	FSMLevelDiskCopy FSMLevel = 4
	// FSMLevelLivePrepare, of the same release, adds a meaning: a live
	// migration's InstanceTask entry may carry a DiskToken, from which
	// the FSM gives the destination's allocation a DiskExportToken and
	// the source's a PrepareDest, so the source's agent has the
	// destination's fetch the instance's image before the migration
	// starts. An older server would drop the token and the migration
	// would copy the whole disk, so the servers draw one only once every
	// server has this level.
	FSMLevelLivePrepare = FSMLevelDiskCopy
	// FSMLevelUserDataUpdate, of the same release, adds no message type
	// but a field: an InstanceUpdate entry's UserData (a rebuild's new
	// user data), which an older FSM would drop, leaving its copy of the
	// instance with the old user data. The servers refuse such an update
	// until every server has this level.
	FSMLevelUserDataUpdate = FSMLevelDiskCopy
	// FSMLevelAppCreds, of the same release, adds Keystone's application
	// credentials (ApplicationCredentialType): until every server has
	// it, creating one is refused (KindUnavailable) and none exists to
	// delete.
	FSMLevelAppCreds = FSMLevelDiskCopy
	// FSMLevelQuotaUsageCheck, of the same release, checks a project
	// quota update against the usage in its own entry
	// (QuotaEntry.CheckUsage); a server without it would ignore the check
	// and apply what the others refuse.
	FSMLevelQuotaUsageCheck = FSMLevelDiskCopy
	// FSMLevelVolumes, of the same release, adds block storage: volumes,
	// their snapshots, volume types and volume quotas. Until every server
	// has it the servers refuse volume writes (the Block Storage API
	// answers 503).
	FSMLevelVolumes = FSMLevelDiskCopy
	// FSMLevelVolumeAttach, of the same release, adds the attach_volume
	// and detach_volume operations of InstanceTask entries, which an
	// older server would refuse as unknown: the servers refuse them
	// until every server has this level.
	FSMLevelVolumeAttach = FSMLevelDiskCopy
	// FSMLevelAllHints, of the same release, adds a field: the
	// SchedulerHints.Other an instance keeps for 2.100's view, which an
	// older FSM would drop. The servers keep no such hint until every
	// server has this level, so that all copies of an instance agree.
	FSMLevelAllHints = FSMLevelDiskCopy
	// FSMLevelFlavorCAS, of the same release, adds a field: a
	// FlavorUpsertRequest's CheckIndex, which an older FSM would ignore
	// and apply the upsert anyway while newer ones refuse it. The servers
	// refuse such upserts until every server has this level.
	FSMLevelFlavorCAS = FSMLevelDiskCopy
	// FSMLevelEvacuateDisk, of the same release, adds no message type
	// but a field: an evacuate entry's EvacuateDisk, from which the FSM
	// tells the destination to look for the instance's disks on shared
	// storage. An older server would drop it and rebuild from the image
	// whatever the caller said, so the servers set it only once every
	// server has this level.
	FSMLevelEvacuateDisk = FSMLevelDiskCopy
	// FSMLevelVolumeMove, of the same release, adds a meaning: moves
	// (resize, cold migration, evacuation, shelve) of an instance with
	// volumes attached, which FSMs of this level refused before, and
	// the fields they set (Allocation.Volumes, VolumeAttachment.MoveHost).
	// It needs no gate of its own: volumes exist only once every server
	// has FSMLevelVolumes, the same level.
	FSMLevelVolumeMove = FSMLevelDiskCopy
	// FSMLevelVolumeCascade, of the same release, adds a meaning: a
	// volume update to deleting with Cascade takes the volume's
	// snapshots to deleting with it, where an older FSM refuses a
	// volume with snapshots. Like FSMLevelVolumeMove it needs no gate
	// of its own: volumes exist only once every server has
	// FSMLevelVolumes, the same level.
	FSMLevelVolumeCascade = FSMLevelDiskCopy
	// FSMLevelVolumeUpload, of the same release, adds the uploading
	// volume status and a volume update's Upload (os-volume_upload_image),
	// which an older FSM would refuse or drop. It needs no gate of its
	// own either: it came with FSMLevelVolumes.
	FSMLevelVolumeUpload = FSMLevelDiskCopy
	// FSMLevelVolumeRetype, of the same release, adds a volume update's
	// VolumeTypeID (os-retype), which an older FSM would drop. It came
	// with FSMLevelVolumes and needs no gate of its own.
	FSMLevelVolumeRetype = FSMLevelDiskCopy
	// FSMLevelVolumeTypeAccess, of the same release, adds the projects
	// of private volume types (VolumeTypeAccessType).
	FSMLevelVolumeTypeAccess = FSMLevelDiskCopy
	// FSMLevelBootFromVolume, of the same release, adds the block
	// devices of instance creates: an older server would store the
	// instances without attaching their volumes, so the servers refuse
	// such creates until every server has this level.
	FSMLevelBootFromVolume = FSMLevelDiskCopy
	// FSMLevelVolumeAttachments, of the same release, adds the Block
	// Storage API's attachment records (VolumeAttachmentType).
	FSMLevelVolumeAttachments = FSMLevelDiskCopy
	// FSMLevelNBDAttach, of the same release, adds a meaning: an
	// attach_volume of a volume kept on another host than the
	// instance's, served by the storage host's NBD server, which an
	// older FSM refuses. It came with attach_volume itself
	// (FSMLevelVolumeAttach), so no server of a lower level meets it.
	FSMLevelNBDAttach = FSMLevelDiskCopy
	// FSMLevelRBDVolumes, of the same release, adds a meaning: a volume
	// of VolumeBackendRBD attaches to an instance on any host through
	// Ceph (VolumeActionArg.RBD), where an older FSM would look for an
	// NBD export. It came with volumes themselves (FSMLevelVolumes,
	// whose writes the servers refuse below this level), so no server
	// of a lower level meets it.
	FSMLevelRBDVolumes = FSMLevelDiskCopy
	// FSMLevelSwapVolume, of the same release, adds the swap_volume
	// instance operation (Nova's swap volume), which a server of a lower
	// level would refuse to apply.
	FSMLevelSwapVolume = FSMLevelDiskCopy
	// FSMLevelReimageVolume, of the same release, adds a rebuild that
	// rewrites the boot volume from the new image (Nova 2.93), which a
	// server of a lower level would apply as a plain rebuild.
	FSMLevelReimageVolume = FSMLevelDiskCopy
	// FSMLevelBootVolumeBuild, of the same release, adds a meaning and a
	// message type: a create entry makes the volumes its instances boot
	// with (InstanceCreateEntry.Volumes), the instances wait for them
	// (Instance.VolumeBuild), and VolumeBuildTimeoutType ends the waits
	// that last too long. Boot from volume came in the same release
	// (FSMLevelBootFromVolume, which the servers require), so no server
	// of a lower level meets it.
	FSMLevelBootVolumeBuild = FSMLevelDiskCopy
	// FSMLevelRemoteBootVolume, of the same release, lets a create's
	// volumes be kept on other storage hosts than the instance's (an
	// NBD export, an RBD image), lets an instance booted from such a
	// volume move, and lets a rebuild reimage it over the network.
	FSMLevelRemoteBootVolume = FSMLevelDiskCopy
	// FSMLevelExtendAttached, of the same release, adds the extend of an
	// in-use volume (Cinder 3.42): the volume keeps its attachments
	// while extending, and the FSM refuses to end such an extend in
	// available. It came with volumes (FSMLevelVolumes), so no server of
	// a lower level meets it.
	FSMLevelExtendAttached = FSMLevelDiskCopy
	// FSMLevelAttachmentUpdate, of the same release, adds the Compute
	// API's update of a volume attachment (ComputeAttachmentUpdateType,
	// Nova 2.85's delete_on_termination), and a meaning: a swap_volume
	// onto a volume kept on another host (its NBD export) or in Ceph, or
	// of the root volume, which an older FSM refuses. Both came with
	// volumes (FSMLevelVolumes), so no server of a lower level meets
	// them.
	FSMLevelAttachmentUpdate = FSMLevelDiskCopy

	// CurrentFSMLevel is the level of this build.
	CurrentFSMLevel = FSMLevelDiskCopy
)

// messageTypeLevels is the level that introduced each message type. It
// lists every type, the baseline ones included, so that a new type left
// out of it is caught by a test rather than by an old server's panic.
var messageTypeLevels = map[MessageType]FSMLevel{
	FlavorUpsertRequestType:     FSMLevelBase,
	FlavorDeleteRequestType:     FSMLevelBase,
	KeyPairUpsertRequestType:    FSMLevelBase,
	KeyPairDeleteRequestType:    FSMLevelBase,
	HostRegisterType:            FSMLevelBase,
	HostStatusUpdateType:        FSMLevelBase,
	HostEnabledUpdateType:       FSMLevelBase,
	InstanceCreateType:          FSMLevelBase,
	InstanceDeleteType:          FSMLevelBase,
	InstanceActionType:          FSMLevelBase,
	AllocClientUpdateType:       FSMLevelBase,
	EvalUpdateType:              FSMLevelBase,
	PlanApplyType:               FSMLevelBase,
	IdentityUpsertType:          FSMLevelBase,
	IdentityDeleteType:          FSMLevelBase,
	SigningKeyUpsertType:        FSMLevelBase,
	TokenRevokeType:             FSMLevelBase,
	InstanceUpdateType:          FSMLevelBase,
	InstanceTaskType:            FSMLevelBase,
	SchedulerConfigSetType:      FSMLevelBase,
	ServerGroupCreateType:       FSMLevelBase,
	ServerGroupDeleteType:       FSMLevelBase,
	AggregateUpdateType:         FSMLevelBase,
	QuotaUpdateType:             FSMLevelBase,
	ImageUpsertType:             FSMLevelBase,
	ImageDeleteType:             FSMLevelBase,
	ImageDataType:               FSMLevelBase,
	ImageLocationType:           FSMLevelBase,
	ImageMemberType:             FSMLevelBase,
	NetApplyType:                FSMLevelBase,
	InstanceGroupRegisterType:   FSMLevelBase,
	InstanceGroupStopType:       FSMLevelBase,
	InstanceGroupDeploymentType: FSMLevelBase,
	InstanceGroupDeleteType:     FSMLevelBase,
	InstancePasswordSetType:     FSMLevelBase,
	InstancePasswordClearType:   FSMLevelBase,
	ConsoleTokenCreateType:      FSMLevelBase,
	ConsoleTokenConsumeType:     FSMLevelBase,
	SnapshotProgressType:        FSMLevelBase,
	NetLeaseReportType:          FSMLevelBase,
	S3BucketType:                FSMLevelBase,
	S3ObjectType:                FSMLevelBase,
	S3MultipartType:             FSMLevelBase,
	EC2CredentialType:           FSMLevelBase,
	HostDeregisterType:          FSMLevelBase,
	HostForceDownType:           FSMLevelBase,
	InstanceActionRecordType:    FSMLevelBase,
	ClusterCASetType:            FSMLevelBase,
	FlavorAccessType:            FSMLevelBase,
	UserQuotaUpdateType:         FSMLevelBase,
	ImageCacheRequestType:       FSMLevelBase,

	InstanceCreateBatchType:    FSMLevelBatched,
	AllocClientUpdateBatchType: FSMLevelBatched,
	// The purges are proposed with IgnoreUnknownTypeFlag: an older
	// server skips them and a later purge, which carries a later cut-off,
	// repeats what it missed.
	CreateRequestPurgeType: FSMLevelBatched,
	EvalReapType:           FSMLevelBatched,
	DeletedPurgeType:       FSMLevelBatched,

	ApplicationCredentialType:   FSMLevelAppCreds,
	VolumeCreateType:            FSMLevelVolumes,
	VolumeUpdateType:            FSMLevelVolumes,
	VolumeDeleteType:            FSMLevelVolumes,
	VolumeSnapshotCreateType:    FSMLevelVolumes,
	VolumeSnapshotUpdateType:    FSMLevelVolumes,
	VolumeSnapshotDeleteType:    FSMLevelVolumes,
	VolumeTypeUpsertType:        FSMLevelVolumes,
	VolumeTypeDeleteType:        FSMLevelVolumes,
	VolumeQuotaUpdateType:       FSMLevelVolumes,
	VolumeAttachmentType:        FSMLevelVolumeAttachments,
	VolumeBuildTimeoutType:      FSMLevelBootVolumeBuild,
	VolumeTypeAccessType:        FSMLevelVolumeTypeAccess,
	ComputeAttachmentUpdateType: FSMLevelAttachmentUpdate,
}

// MessageTypeLevel returns the level that introduced t (the ignorable
// flag cleared), and false for a type the table does not list.
func MessageTypeLevel(t MessageType) (FSMLevel, bool) {
	l, ok := messageTypeLevels[t&^IgnoreUnknownTypeFlag]
	return l, ok
}

// RequiredFSMLevel is the level every server must advertise before the
// leader may propose an entry of type t: none (0) for an entry proposed
// with IgnoreUnknownTypeFlag, which an older server skips, and the
// level that introduced it otherwise. A type the table does not list
// needs CurrentFSMLevel: no server of an older build knows it.
func RequiredFSMLevel(t MessageType) FSMLevel {
	if t&IgnoreUnknownTypeFlag != 0 {
		return 0
	}
	if l, ok := messageTypeLevels[t]; ok {
		return l
	}
	return CurrentFSMLevel
}

// LevelledMessageTypes returns every message type the level table lists,
// for tests that check it against the FSM's handlers.
func LevelledMessageTypes() []MessageType {
	out := make([]MessageType, 0, len(messageTypeLevels))
	for t := range messageTypeLevels {
		out = append(out, t)
	}
	return out
}

// AdvertisedFSMLevel is the level to assume for a server that advertises
// level (0 = none, a build from before levels).
func AdvertisedFSMLevel(level int) FSMLevel {
	if level <= 0 {
		return FSMLevelBase
	}
	return FSMLevel(level)
}

// String names a level for logs and errors.
func (l FSMLevel) String() string {
	return fmt.Sprintf("fsm level %d", int(l))
}
