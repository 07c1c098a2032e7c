package structs

// VolumeCreateEntry is the Raft entry that stores a new volume; the FSM
// checks its source, its type and the project's quotas.
type VolumeCreateEntry struct {
	Volume *Volume
}

// VolumeUpdateEntry changes a volume. FromStatus, when set, is the
// statuses the volume must be in for the entry to apply (the transition
// is checked against the state every earlier entry left, not against
// what the proposer read); Host, when set, must be the volume's storage
// host (a storage agent's report). A nil field is left as it is.
type VolumeUpdateEntry struct {
	ID         string
	FromStatus []string
	Host       string
	Status     string
	// Reset lets Status step outside the status machine
	// (VolumeTransitionAllowed): an admin's os-reset_status or
	// os-force_delete.
	Reset bool
	// SizeGB, when above the volume's size, extends it; the growth is
	// checked against the gigabytes quotas.
	SizeGB      int
	Name        *string
	Description *string
	Bootable    *bool
	// Metadata is merged into the volume's, or replaces it with
	// ReplaceMetadata; DeleteMetadata drops keys.
	Metadata         map[string]string
	ReplaceMetadata  bool
	DeleteMetadata   []string
	ProviderLocation *string
	ErrorMessage     *string
	UpdatedAt        int64
	// Cascade, with Status deleting, takes the volume's snapshots to
	// deleting in the same write (Cinder's cascade delete) instead of
	// refusing a volume that has any; each must be in CascadeFrom (any
	// status when empty) or the entry is refused (FSMLevelVolumeCascade).
	Cascade     bool     `json:",omitempty"`
	CascadeFrom []string `json:",omitempty"`
	// Upload, with Status uploading, names the image the storage host
	// copies the volume into (FSMLevelVolumeUpload); a volume leaving
	// uploading forgets it.
	Upload *VolumeUpload `json:",omitempty"`
	// VolumeTypeID retypes the volume (os-retype within its backend,
	// FSMLevelVolumeRetype).
	VolumeTypeID *string `json:",omitempty"`
}

// VolumeDeleteEntry removes a volume's record (its storage is gone or
// never existed), releasing its quota.
type VolumeDeleteEntry struct {
	ID         string
	FromStatus []string
	Host       string
}

// VolumeSnapshotCreateEntry stores a new snapshot of a volume.
// AllowInUse is Cinder's force: snapshot a volume an instance uses.
type VolumeSnapshotCreateEntry struct {
	Snapshot   *VolumeSnapshot
	AllowInUse bool
}

// VolumeSnapshotUpdateEntry changes a snapshot, as VolumeUpdateEntry a
// volume.
type VolumeSnapshotUpdateEntry struct {
	ID               string
	FromStatus       []string
	Host             string
	Status           string
	Name             *string
	Description      *string
	Metadata         map[string]string
	ReplaceMetadata  bool
	DeleteMetadata   []string
	ProviderLocation *string
	ErrorMessage     *string
	UpdatedAt        int64
}

// VolumeSnapshotDeleteEntry removes a snapshot's record.
type VolumeSnapshotDeleteEntry struct {
	ID         string
	FromStatus []string
	Host       string
}

// VolumeTypeUpsertEntry stores a volume type.
type VolumeTypeUpsertEntry struct {
	Type *VolumeType
}

// VolumeTypeDeleteEntry removes a volume type no volume uses.
type VolumeTypeDeleteEntry struct {
	ID string
}

// VolumeCreateRequest creates a volume in ProjectID (a non-admin's
// own). The servers choose its id when it has none, its storage host
// and its timestamps.
type VolumeCreateRequest struct {
	ProjectID string
	Volume    *Volume
	// Host, when set, is the storage host the volume must be placed on
	// (the other volumes of a server that boots from volumes); the
	// create fails when that host cannot take it.
	Host string `json:",omitempty"`
	WriteRequest
}

// SingleVolumeResponse carries one volume.
type SingleVolumeResponse struct {
	Volume *Volume
	QueryMeta
}

// VolumeListRequest lists a project's volumes (every project's when
// ProjectID is empty, which only admins may ask).
type VolumeListRequest struct {
	ProjectID string
	QueryOptions
}

// VolumeListResponse answers VolumeListRequest.
type VolumeListResponse struct {
	Volumes []*Volume
	QueryMeta
}

// VolumeSpecificRequest reads one volume; ProjectID, when set, must own
// it.
type VolumeSpecificRequest struct {
	VolumeID  string
	ProjectID string
	QueryOptions
}

// VolumeUpdateRequest changes a volume; ProjectID, when set, must own
// it. A nil field is left as it is. NewSizeGB extends an available
// volume, or an in-use one with ExtendAttached (Cinder 3.42+'s
// extend_attached_volume); ResetStatus (admins only) sets any status.
type VolumeUpdateRequest struct {
	VolumeID        string
	ProjectID       string
	Name            *string
	Description     *string
	Bootable        *bool
	Metadata        map[string]string
	ReplaceMetadata bool
	DeleteMetadata  []string
	NewSizeGB       int
	ExtendAttached  bool
	ResetStatus     string
	WriteRequest
}

// VolumeDeleteRequest deletes a volume; Force is os-force_delete (any
// status but attached); Cascade deletes its snapshots first.
type VolumeDeleteRequest struct {
	VolumeID  string
	ProjectID string
	Force     bool
	Cascade   bool
	WriteRequest
}

// VolumeHostRequest is a storage agent's blocking read of the volumes
// and snapshots assigned to its host.
type VolumeHostRequest struct {
	HostID string
	QueryOptions
}

// VolumeHostResponse answers VolumeHostRequest.
type VolumeHostResponse struct {
	Volumes   []*Volume
	Snapshots []*VolumeSnapshot
	// HostNames names the compute hosts of the volumes' attachments
	// (Host and MoveHost), by id: the storage host admits their
	// certificates (tlsutil.HostClientName) to its NBD exports. Servers
	// before it leave it empty.
	HostNames map[string]string `json:",omitempty"`
	QueryMeta
}

// VolumeAttachedRequest is a compute agent's blocking read of the
// volumes attached to instances on its host.
type VolumeAttachedRequest struct {
	HostID string
	QueryOptions
}

// VolumeReportRequest is a storage agent's report about its host's
// volumes and snapshots: at most one of the fields is set. Every entry's
// Host must be HostID.
type VolumeReportRequest struct {
	HostID         string
	Update         *VolumeUpdateEntry
	Delete         *VolumeDeleteEntry
	SnapshotUpdate *VolumeSnapshotUpdateEntry
	SnapshotDelete *VolumeSnapshotDeleteEntry
	WriteRequest
}

// VolumeSnapshotCreateRequest snapshots a volume of ProjectID; Force
// allows an in-use one.
type VolumeSnapshotCreateRequest struct {
	ProjectID string
	Snapshot  *VolumeSnapshot
	Force     bool
	WriteRequest
}

// SingleVolumeSnapshotResponse carries one snapshot.
type SingleVolumeSnapshotResponse struct {
	Snapshot *VolumeSnapshot
	QueryMeta
}

// VolumeSnapshotListRequest lists a project's snapshots (every
// project's when ProjectID is empty).
type VolumeSnapshotListRequest struct {
	ProjectID string
	QueryOptions
}

// VolumeSnapshotListResponse answers VolumeSnapshotListRequest.
type VolumeSnapshotListResponse struct {
	Snapshots []*VolumeSnapshot
	QueryMeta
}

// VolumeSnapshotSpecificRequest reads one snapshot.
type VolumeSnapshotSpecificRequest struct {
	SnapshotID string
	ProjectID  string
	QueryOptions
}

// VolumeSnapshotUpdateRequest changes a snapshot's name, description
// or metadata; ResetStatus (admins only) sets its status.
type VolumeSnapshotUpdateRequest struct {
	SnapshotID      string
	ProjectID       string
	Name            *string
	Description     *string
	Metadata        map[string]string
	ReplaceMetadata bool
	DeleteMetadata  []string
	ResetStatus     string
	WriteRequest
}

// VolumeSnapshotDeleteRequest deletes a snapshot.
type VolumeSnapshotDeleteRequest struct {
	SnapshotID string
	ProjectID  string
	WriteRequest
}

// VolumeTypeListRequest lists the volume types.
type VolumeTypeListRequest struct {
	QueryOptions
}

// VolumeTypeListResponse answers VolumeTypeListRequest, __DEFAULT__
// first.
type VolumeTypeListResponse struct {
	Types []*VolumeType
	QueryMeta
}

// VolumeTypeSpecificRequest reads one type by id or name.
type VolumeTypeSpecificRequest struct {
	TypeID string
	QueryOptions
}

// SingleVolumeTypeResponse carries one type.
type SingleVolumeTypeResponse struct {
	Type *VolumeType
	QueryMeta
}

// VolumeTypeUpsertRequest creates or changes a volume type.
type VolumeTypeUpsertRequest struct {
	Type *VolumeType
	WriteRequest
}

// VolumeTypeDeleteRequest removes a volume type.
type VolumeTypeDeleteRequest struct {
	TypeID string
	WriteRequest
}

// VolumeQuotaRequest reads a project's volume quotas (the defaults with
// Defaults) and, with Usage, what it uses.
type VolumeQuotaRequest struct {
	ProjectID string
	Defaults  bool
	Usage     bool
	QueryOptions
}

// VolumeQuotaResponse carries limits and usage of the volume resources.
// Reserved is always zero: the FSM consumes quota in the write itself.
type VolumeQuotaResponse struct {
	Limits map[string]int64
	Usage  map[string]int64
	QueryMeta
}

// VolumeQuotaUpdateRequest sets a project's volume limits (the default
// class's when Class is set).
type VolumeQuotaUpdateRequest struct {
	ProjectID string
	Class     string
	Limits    map[string]int64
	WriteRequest
}

// VolumeZonesRequest lists the availability zones of the storage hosts.
type VolumeZonesRequest struct {
	QueryOptions
}

// VolumeZone is one availability zone of storage hosts; Available when
// one of its hosts is up and enabled.
type VolumeZone struct {
	Name      string
	Available bool
}

// VolumeZonesResponse answers VolumeZonesRequest, sorted by name.
type VolumeZonesResponse struct {
	Zones []VolumeZone
	QueryMeta
}
