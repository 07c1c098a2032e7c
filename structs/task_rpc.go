package structs

// Instance operations (InstanceTaskRequest.Op). Names follow Nova's
// server actions.
const (
	OpStart          = "start"
	OpStop           = "stop"
	OpRebootSoft     = ActionRebootSoft
	OpRebootHard     = ActionRebootHard
	OpPause          = "pause"
	OpUnpause        = "unpause"
	OpSuspend        = "suspend"
	OpResume         = "resume"
	OpLock           = "lock"
	OpUnlock         = "unlock"
	OpRescue         = "rescue"
	OpUnrescue       = "unrescue"
	OpRebuild        = "rebuild"
	OpResize         = "resize"
	OpConfirmResize  = "confirmResize"
	OpRevertResize   = "revertResize"
	OpMigrate        = "migrate"
	OpLiveMigrate    = "live-migration"
	OpEvacuate       = "evacuate"
	OpShelve         = "shelve"
	OpShelveOffload  = "shelveOffload"
	OpUnshelve       = "unshelve"
	OpRestore        = "restore"
	OpForceDelete    = "forceDelete"
	OpSoftDelete     = "softDelete"
	OpReclaim        = "reclaim" // the servers' own: a soft-deleted instance's time is up
	OpAutoConfirm    = "autoConfirm"
	OpAbortMigration = "abortMigration" // the servers' own: a move's destination died
	OpResetState     = "resetState"     // an admin's os-resetState: force vm_state, drop the task
	// OpTriggerCrashDump is Nova's trigger_crash_dump (2.17+).
	OpTriggerCrashDump = "trigger_crash_dump"
)

// InstanceTaskRequest asks for an operation on an instance. The caller's
// identity decides what is allowed (a locked instance refuses its
// project's members; moving instances is for admins).
type InstanceTaskRequest struct {
	InstanceID string
	Op         string
	// FlavorID is the flavor a resize moves to.
	FlavorID string
	// ImageID is a rebuild's new image or a rescue image.
	ImageID string
	// ReimageBootVolume asks a rebuild of a server booted from a volume
	// to rewrite that volume from ImageID (Nova 2.93).
	ReimageBootVolume bool `json:",omitempty"`
	// ImageProperties are a rebuild's image properties.
	ImageProperties map[string]string
	// TargetHost (name or id) is where an admin wants the instance moved.
	TargetHost string
	// OnSharedStorage is an evacuation's on_shared_storage (before
	// microversion 2.14): whether the caller says the instance's disks
	// are on storage the destination shares; nil lets the destination
	// find out.
	OnSharedStorage *bool `json:",omitempty"`
	// Reason is a lock's reason.
	Reason string
	// State is the vm_state os-resetState forces (active or error).
	State string
	// Rotation is how many backups a createBackup keeps (its ImageID is
	// the queued image that receives the data).
	Rotation int
	// Volume is what attach_volume and detach_volume act on.
	Volume *VolumeAttachRequest `json:",omitempty"`
	// Caller: Admin bypasses locks; a lock by an admin cannot be undone
	// by the owner.
	ProjectID string
	UserID    string
	Admin     bool
	// RequestID names the instance action; one is chosen if empty.
	RequestID string
	// IdempotencyKey, when set, makes the submission idempotent in the
	// caller's project: a retry with the same key (after an election
	// lost the answer) is answered with the first task instead of a
	// conflict (TaskIdempotency).
	IdempotencyKey string `json:",omitempty"`
	WriteRequest
}

// InstanceTaskResponse reports the operation's action and migration.
type InstanceTaskResponse struct {
	RequestID   string
	MigrationID uint64
	// ImageID is the image a snapshot or backup writes: the first
	// submission's when a retry with its idempotency key was answered.
	ImageID  string
	Instance *Instance
	WriteMeta
}

// InstanceTaskEntry starts an operation. The leader resolved and checked
// everything, ids and timestamps included; the FSM checks the instance's
// state again, since it may have changed since.
type InstanceTaskEntry struct {
	InstanceID string
	Op         string
	// Action is the instance action to record (nil for none).
	Action *InstanceAction
	// Eval places the destination of a move.
	Eval *Evaluation
	// Migration is the record of a move.
	Migration *Migration
	// NewFlavor is a resize's flavor.
	NewFlavor       *Flavor
	ImageID         string
	ImageProperties map[string]string
	// ReimageBootVolume is InstanceTaskRequest.ReimageBootVolume.
	ReimageBootVolume bool `json:",omitempty"`
	TargetHostID      string
	// DestAddr is the destination's address for a forced live migration.
	Reason   string
	LockedBy string
	// State is the vm_state a reset forces.
	State string
	// Offload says a shelve frees the host at once.
	Offload bool
	// AllowSameHost says a resize may land on the instance's own host
	// (Nova's allow_resize_to_same_host), which then resizes it in place.
	AllowSameHost bool `json:",omitempty"`
	// DiskToken is a resize's or cold migration's disk-transfer secret
	// (Task.DiskToken), drawn by the leader: the FSM draws nothing.
	DiskToken string `json:",omitempty"`
	// EvacuateDisk is an evacuation's EvacuateDisk* rule, set by the
	// leader (FSMLevelEvacuateDisk); empty rebuilds from the image.
	EvacuateDisk string `json:",omitempty"`
	// Rotation is how many backups a createBackup keeps.
	Rotation int
	// Volume is what attach_volume and detach_volume act on; an
	// attach's AttachmentID is drawn by the leader.
	Volume    *VolumeAttachRequest `json:",omitempty"`
	UpdatedAt int64
	// Idempotency, when set, records the task by its client's key.
	Idempotency *TaskIdempotency `json:",omitempty"`
}

// InstanceActionListRequest lists an instance's actions, or reads one.
type InstanceActionListRequest struct {
	InstanceID string
	// RequestID, when set, reads that one action.
	RequestID string
	QueryOptions
}

// InstanceActionListResponse carries actions, newest first.
type InstanceActionListResponse struct {
	Actions []*InstanceAction
	QueryMeta
}

// MigrationListRequest lists migrations, all or one instance's.
type MigrationListRequest struct {
	InstanceID string
	QueryOptions
}

// MigrationListResponse carries migrations by id.
type MigrationListResponse struct {
	Migrations []*Migration
	QueryMeta
}
