package structs

import (
	"fmt"
)

// MessageType identifies a Raft log entry's payload. The enum is
// append-only: a value, once released, keeps its meaning forever.
type MessageType uint8

// IgnoreUnknownTypeFlag is set on message types that an older server may
// skip when it does not know them (the change is optional to it), instead
// of refusing to apply the log. FSMLevel says when to use it rather than
// a new FSM level.
const IgnoreUnknownTypeFlag MessageType = 128

// Raft message types. Append only; never renumber.
const (
	FlavorUpsertRequestType  MessageType = 0
	FlavorDeleteRequestType  MessageType = 1
	KeyPairUpsertRequestType MessageType = 2
	KeyPairDeleteRequestType MessageType = 3
	HostRegisterType         MessageType = 4
	HostStatusUpdateType     MessageType = 5
	HostEnabledUpdateType    MessageType = 6
	InstanceCreateType       MessageType = 7
	InstanceDeleteType       MessageType = 8
	InstanceActionType       MessageType = 9
	AllocClientUpdateType    MessageType = 10
	EvalUpdateType           MessageType = 11
	PlanApplyType            MessageType = 12
	IdentityUpsertType       MessageType = 13
	IdentityDeleteType       MessageType = 14
	SigningKeyUpsertType     MessageType = 15
	TokenRevokeType          MessageType = 16
	InstanceUpdateType       MessageType = 17
	InstanceTaskType         MessageType = 18
	SchedulerConfigSetType   MessageType = 19
	// 20-29 are reserved for server groups, aggregates and quotas.
	ServerGroupCreateType MessageType = 20
	ServerGroupDeleteType MessageType = 21
	AggregateUpdateType   MessageType = 22
	QuotaUpdateType       MessageType = 23
	// 30-39 are reserved for images.
	ImageUpsertType   MessageType = 30
	ImageDeleteType   MessageType = 31
	ImageDataType     MessageType = 32
	ImageLocationType MessageType = 33
	ImageMemberType   MessageType = 34
	// 40-49 are reserved for networking (networks, subnets, ports,
	// security groups, floating IPs, routers).
	NetApplyType MessageType = 40
	// 50-59 are reserved for instance groups (HCL specs).
	InstanceGroupRegisterType   MessageType = 50
	InstanceGroupStopType       MessageType = 51
	InstanceGroupDeploymentType MessageType = 52
	InstanceGroupDeleteType     MessageType = 53
	// 62-63 are reserved for the metadata service (instance passwords).
	InstancePasswordSetType   MessageType = 62
	InstancePasswordClearType MessageType = 63
	// 64-65 are reserved for console authorization tokens.
	ConsoleTokenCreateType  MessageType = 64
	ConsoleTokenConsumeType MessageType = 65
	// 66-67 are reserved for instance snapshots (createImage).
	SnapshotProgressType MessageType = 66
	// 74-75 are reserved for the network dataplane (DHCP leases).
	NetLeaseReportType MessageType = 74
	// 68-71 are reserved for the S3 object store and EC2 credentials.
	S3BucketType      MessageType = 68
	S3ObjectType      MessageType = 69
	S3MultipartType   MessageType = 70
	EC2CredentialType MessageType = 71
	// 72-73: removing a host, and forcing one down (fencing).
	HostDeregisterType MessageType = 72
	HostForceDownType  MessageType = 73
	// 76-77: instance actions that run outside the task engine
	// (changePassword, synchronous on the host's agent).
	InstanceActionRecordType MessageType = 76
	// 60 is the cluster certificate authority, 61 a flavor's access list.
	ClusterCASetType MessageType = 60
	FlavorAccessType MessageType = 61
	// 78-81: per-user quotas and aggregate image cache requests.
	UserQuotaUpdateType   MessageType = 78
	ImageCacheRequestType MessageType = 79
	// 88: single-instance creates coalesced by the leader into one entry.
	InstanceCreateBatchType MessageType = 88
	// 87: agents' allocation reports coalesced by the leader into one
	// entry.
	AllocClientUpdateBatchType MessageType = 87
	// 80 and 82: the purges of old idempotency keys and of finished
	// evaluations.
	CreateRequestPurgeType MessageType = 80
	EvalReapType           MessageType = 82
	// 83: the purge of deleted instances' records past their retention.
	DeletedPurgeType MessageType = 83
	// 89-97 are block storage (volumes, their snapshots, types and
	// quotas).
	VolumeCreateType         MessageType = 89
	VolumeUpdateType         MessageType = 90
	VolumeDeleteType         MessageType = 91
	VolumeSnapshotCreateType MessageType = 92
	VolumeSnapshotUpdateType MessageType = 93
	VolumeSnapshotDeleteType MessageType = 94
	VolumeTypeUpsertType     MessageType = 95
	VolumeTypeDeleteType     MessageType = 96
	VolumeQuotaUpdateType    MessageType = 97
	// 98: Keystone application credentials.
	ApplicationCredentialType MessageType = 98
	// 99: the Block Storage API's volume attachments (3.27+).
	VolumeAttachmentType MessageType = 99
	// 106: the leader's end of server builds whose volumes were not
	// made in time (VolumeBuildTimeoutEntry).
	VolumeBuildTimeoutType MessageType = 106
	// 110: the projects of a private volume type
	// (os-volume-type-access).
	VolumeTypeAccessType MessageType = 110
	// 102: the Compute API's update of a volume attachment (Nova 2.85).
	ComputeAttachmentUpdateType MessageType = 102
)

// String names a message type for logs and errors.
func (t MessageType) String() string {
	if name, ok := messageTypeNames[t&^IgnoreUnknownTypeFlag]; ok {
		return name
	}
	return fmt.Sprintf("MessageType(%d)", uint8(t))
}

var messageTypeNames = map[MessageType]string{
	FlavorUpsertRequestType:  "FlavorUpsert",
	FlavorDeleteRequestType:  "FlavorDelete",
	KeyPairUpsertRequestType: "KeyPairUpsert",
	KeyPairDeleteRequestType: "KeyPairDelete",
	HostRegisterType:         "HostRegister",
	HostStatusUpdateType:     "HostStatusUpdate",
	HostEnabledUpdateType:    "HostEnabledUpdate",
	InstanceCreateType:       "InstanceCreate",
	InstanceCreateBatchType:  "InstanceCreateBatch",
	InstanceDeleteType:       "InstanceDelete",
	InstanceActionType:       "InstanceAction",
	AllocClientUpdateType:    "AllocClientUpdate",
	EvalUpdateType:           "EvalUpdate",
	PlanApplyType:            "PlanApply",
	IdentityUpsertType:       "IdentityUpsert",
	IdentityDeleteType:       "IdentityDelete",
	SigningKeyUpsertType:     "SigningKeyUpsert",
	TokenRevokeType:          "TokenRevoke",
	InstanceUpdateType:       "InstanceUpdate",
	InstanceTaskType:         "InstanceTask",
	SchedulerConfigSetType:   "SchedulerConfigSet",
	ServerGroupCreateType:    "ServerGroupCreate",
	ServerGroupDeleteType:    "ServerGroupDelete",
	AggregateUpdateType:      "AggregateUpdate",
	QuotaUpdateType:          "QuotaUpdate",
	ImageUpsertType:          "ImageUpsert",
	ImageDeleteType:          "ImageDelete",
	ImageDataType:            "ImageData",
	ImageLocationType:        "ImageLocation",
	ImageMemberType:          "ImageMember",
	NetApplyType:             "NetApply",

	InstanceGroupRegisterType:   "InstanceGroupRegister",
	InstanceGroupStopType:       "InstanceGroupStop",
	InstanceGroupDeploymentType: "InstanceGroupDeployment",
	InstanceGroupDeleteType:     "InstanceGroupDelete",

	InstancePasswordSetType:   "InstancePasswordSet",
	InstancePasswordClearType: "InstancePasswordClear",

	ConsoleTokenCreateType:  "ConsoleTokenCreate",
	ConsoleTokenConsumeType: "ConsoleTokenConsume",
	SnapshotProgressType:    "SnapshotProgress",

	NetLeaseReportType: "NetLeaseReport",

	S3BucketType:      "S3Bucket",
	S3ObjectType:      "S3Object",
	S3MultipartType:   "S3Multipart",
	EC2CredentialType: "EC2Credential",

	ClusterCASetType: "ClusterCASet",
	FlavorAccessType: "FlavorAccess",

	HostDeregisterType: "HostDeregister",
	HostForceDownType:  "HostForceDown",

	InstanceActionRecordType: "InstanceActionRecord",

	UserQuotaUpdateType:   "UserQuotaUpdate",
	ImageCacheRequestType: "ImageCacheRequest",

	CreateRequestPurgeType: "CreateRequestPurge",
	EvalReapType:           "EvalReap",
	DeletedPurgeType:       "DeletedPurge",

	VolumeCreateType:            "VolumeCreate",
	VolumeUpdateType:            "VolumeUpdate",
	VolumeDeleteType:            "VolumeDelete",
	VolumeSnapshotCreateType:    "VolumeSnapshotCreate",
	VolumeSnapshotUpdateType:    "VolumeSnapshotUpdate",
	VolumeSnapshotDeleteType:    "VolumeSnapshotDelete",
	VolumeTypeUpsertType:        "VolumeTypeUpsert",
	VolumeTypeDeleteType:        "VolumeTypeDelete",
	VolumeQuotaUpdateType:       "VolumeQuotaUpdate",
	VolumeAttachmentType:        "VolumeAttachment",
	VolumeBuildTimeoutType:      "VolumeBuildTimeout",
	VolumeTypeAccessType:        "VolumeTypeAccess",
	ApplicationCredentialType:   "ApplicationCredential",
	ComputeAttachmentUpdateType: "ComputeAttachmentUpdate",
}

// EntryVersion is the format version this build writes into every Raft
// entry. A handler receives the version of the entry it applies, so a newer
// server can read every entry an older one wrote.
const EntryVersion uint8 = 1

// entryHeaderLen is the size of [type][version] before the msgpack body.
const entryHeaderLen = 2

// EncodeEntry builds a Raft log entry: one byte of message type, one byte
// of format version, then the msgpack body.
func EncodeEntry(t MessageType, body any) ([]byte, error) {
	return EncodeEntryVersion(t, EntryVersion, body)
}

// EncodeEntryVersion is EncodeEntry with an explicit version; tests use it
// to write entries as an older server would have.
func EncodeEntryVersion(t MessageType, version uint8, body any) ([]byte, error) {
	enc, err := Encode(body)
	if err != nil {
		return nil, fmt.Errorf("encode %s entry: %w", t, err)
	}
	buf := make([]byte, 0, entryHeaderLen+len(enc))
	buf = append(buf, byte(t), version)
	return append(buf, enc...), nil
}

// DecodeEntry splits a Raft log entry into its type, version and body.
func DecodeEntry(buf []byte) (MessageType, uint8, []byte, error) {
	if len(buf) < entryHeaderLen {
		return 0, 0, nil, fmt.Errorf("raft entry of %d bytes is shorter than its header", len(buf))
	}
	return MessageType(buf[0]), buf[1], buf[entryHeaderLen:], nil
}

// SnapshotType identifies one record kind in a snapshot stream. Like
// MessageType it is append-only, and records with IgnoreUnknownSnapshotFlag
// may be skipped by a server that does not know them.
type SnapshotType uint8

// IgnoreUnknownSnapshotFlag marks snapshot records that are safe to skip.
const IgnoreUnknownSnapshotFlag SnapshotType = 128

// Snapshot record types. Append only; never renumber.
const (
	SnapshotHeader          SnapshotType = 0
	IndexSnapshot           SnapshotType = 1
	FlavorSnapshot          SnapshotType = 2
	KeyPairSnapshot         SnapshotType = 3
	HostSnapshot            SnapshotType = 4
	InstanceSnapshot        SnapshotType = 5
	AllocationSnapshot      SnapshotType = 6
	EvalSnapshot            SnapshotType = 7
	ProjectSnapshot         SnapshotType = 8
	UserSnapshot            SnapshotType = 9
	RoleSnapshot            SnapshotType = 10
	AssignmentSnapshot      SnapshotType = 11
	SigningKeySnapshot      SnapshotType = 12
	RevokedSnapshot         SnapshotType = 13
	InstanceActionSnapshot  SnapshotType = 14
	MigrationSnapshot       SnapshotType = 15
	InstanceUsageSnapshot   SnapshotType = 16
	SchedulerConfigSnapshot SnapshotType = 17
	// 20-29 are reserved for server groups, aggregates and quotas.
	ServerGroupSnapshot SnapshotType = 20
	AggregateSnapshot   SnapshotType = 21
	QuotaSnapshot       SnapshotType = 22
	// 30-39 are reserved for images.
	ImageSnapshot       SnapshotType = 30
	ImageMemberSnapshot SnapshotType = 31
	// 40-49 are reserved for networking.
	NetworkSnapshot           SnapshotType = 40
	SubnetSnapshot            SnapshotType = 41
	PortSnapshot              SnapshotType = 42
	SecurityGroupSnapshot     SnapshotType = 43
	SecurityGroupRuleSnapshot SnapshotType = 44
	FloatingIPSnapshot        SnapshotType = 45
	RouterSnapshot            SnapshotType = 46
	// 50-59 are reserved for instance groups (HCL specs).
	InstanceGroupSnapshot           SnapshotType = 50
	InstanceGroupVersionSnapshot    SnapshotType = 51
	InstanceGroupDeploymentSnapshot SnapshotType = 52
	// 64 is reserved for console authorization tokens.
	ConsoleTokenSnapshot SnapshotType = 64
	// 74 is reserved for the network dataplane (DHCP leases).
	PortLeaseSnapshot SnapshotType = 74
	// 68-70 are reserved for the S3 object store and EC2 credentials.
	S3BucketSnapshot      SnapshotType = 68
	S3ObjectSnapshot      SnapshotType = 69
	EC2CredentialSnapshot SnapshotType = 70
	// 60 is reserved for the cluster certificate authority.
	ClusterCASnapshot SnapshotType = 60
	// 78-81: per-user quotas and aggregate image cache requests.
	UserQuotaSnapshot  SnapshotType = 78
	ImageCacheSnapshot SnapshotType = 79
	// 80: idempotent creates (create request records by key).
	CreateRequestSnapshot SnapshotType = 80
	// 85: idempotent task submissions (task request records by key).
	TaskRequestSnapshot SnapshotType = 85
	// 89-91: block storage.
	VolumeRecordSnapshot     SnapshotType = 89
	VolumeSnapRecordSnapshot SnapshotType = 90
	VolumeTypeRecordSnapshot SnapshotType = 91
	// 92: Keystone application credentials.
	ApplicationCredentialSnapshot SnapshotType = 92
)

// SnapshotVersion is the version written in each snapshot's header.
const SnapshotVersion uint8 = 1

// SnapshotHeaderRecord opens every snapshot stream.
type SnapshotHeaderRecord struct {
	Magic   string
	Version uint8
	// LastIndex is the Raft index the snapshot reflects.
	LastIndex uint64
}

// SnapshotMagic identifies a Stratus snapshot.
const SnapshotMagic = "stratus-fsm-snapshot"

// IndexEntry is one row of the Raft-index table: the last index at which
// a table changed.
type IndexEntry struct {
	Key   string
	Value uint64
}
