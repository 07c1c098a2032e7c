package structs

// Task kinds: the multi-step operations the servers drive.
const (
	TaskKindPower       = "power"          // start, stop, reboot, pause, suspend, rescue and their inverses
	TaskKindRebuild     = "rebuild"        // new image, same host
	TaskKindResize      = "resize"         // new flavor, another host
	TaskKindMigrate     = "migrate"        // same flavor, another host, stopped while it moves
	TaskKindLiveMigrate = "live-migration" // same flavor, another host, running throughout
	TaskKindEvacuate    = "evacuate"       // rebuild elsewhere, the host being down
	TaskKindShelve      = "shelve"         // power off, optionally offload
	TaskKindOffload     = "shelve-offload" // free the host
	TaskKindUnshelve    = "unshelve"       // schedule again and spawn
	TaskKindRevert      = "revert-resize"  // back to the source host
	TaskKindConfirm     = "confirm-resize" // drop the source host
)

// Task steps. A task is at exactly one step; each step waits for one
// thing (a plan, an agent's report) and the FSM moves it on in the same
// entry that records that thing.
const (
	StepSchedule     = "schedule"      // waiting for a placement of the destination
	StepAgent        = "agent"         // waiting for the agent to carry out the allocation's action
	StepSourceStop   = "source-stop"   // waiting for the source to power off
	StepDestSpawn    = "dest-spawn"    // waiting for the destination to spawn
	StepSourceSend   = "source-send"   // waiting for the source to live-migrate the guest
	StepDestDelete   = "dest-delete"   // waiting for the destination to destroy its copy
	StepSourceDelete = "source-delete" // waiting for the source to destroy its copy
	StepSourceStart  = "source-start"  // waiting for the source to come back
)

// Task is an instance's operation in progress, recorded step by step in
// the instance itself so that a new leader or a restarted agent carries on
// where the last one stopped.
type Task struct {
	Kind string
	Step string
	// Op is the API action that started it ("pause", "resize", …).
	Op string
	// RequestID names the instance action (os-instance-actions) it
	// reports to.
	RequestID string
	// MigrationID is the migration record of a move, 0 for none.
	MigrationID uint64
	// EvalID is the evaluation that places the destination.
	EvalID string

	SourceHostID  string
	SourceAllocID string
	DestHostID    string
	DestAllocID   string
	// TargetHostID is the host an admin asked for, if any.
	TargetHostID string
	// AllowSameHost lets a resize's destination be its source host
	// (allow_resize_to_same_host): the instance is resized in place.
	AllowSameHost bool `json:",omitempty"`
	// DiskToken is the secret a resize's or cold migration's source
	// agent asks of the destination fetching the disks (DiskSource);
	// empty on servers older than FSMLevelDiskCopy, whose moves build
	// fresh disks.
	DiskToken string `json:",omitempty"`
	// EvacuateDisk is an evacuation's EvacuateDisk* rule, given to the
	// destination's allocation; empty rebuilds from the image.
	EvacuateDisk string `json:",omitempty"`
	// SnapshotImageID is the image a shelve uploads the instance's disk
	// to (Nova's shelved_image_id), empty when it keeps no snapshot.
	SnapshotImageID string `json:",omitempty"`
	// VolumeID is the volume an attach_volume or detach_volume task
	// settles when the agent reports.
	VolumeID string `json:",omitempty"`
	// SwapFromVolumeID is the volume a swap_volume task moves the
	// instance off (onto VolumeID).
	SwapFromVolumeID string `json:",omitempty"`

	// NewFlavor is the flavor a resize moves to.
	NewFlavor *Flavor
	// PowerOn says whether the instance runs at the end (a stopped
	// instance stays stopped through a resize, as in Nova).
	PowerOn bool
	// PrevVMState is the vm_state to return to when the task fails.
	PrevVMState string

	StartedAt int64
}

// Copy returns a deep copy (flavors are immutable snapshots and shared).
func (t *Task) Copy() *Task {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// PendingResize is a finished resize or cold migration awaiting the
// user's confirm or revert. The source keeps its allocation (stopped)
// until then.
type PendingResize struct {
	Kind          string // TaskKindResize or TaskKindMigrate
	MigrationID   uint64
	SourceHostID  string
	SourceAllocID string
	OldFlavor     *Flavor
	// PowerOn says whether a revert starts the source again.
	PowerOn bool
	// FinishedAt starts the automatic confirm window.
	FinishedAt int64
}

// SchedulerHints are Nova's os:scheduler_hints: the ones Stratus
// honours, and the others kept as given for the API to show.
type SchedulerHints struct {
	Group         string
	SameHost      []string
	DifferentHost []string
	// Other holds the hints the scheduler does not act on (query, cidr,
	// build_near_host_ip, target_cell, an operator's own…), each as a
	// list of strings as Nova's request spec keeps them, so 2.100's
	// server view can show every hint the user gave. Kept only from
	// FSMLevelAllHints on; nil for none.
	Other map[string][]string
}

// Limits on the hints kept in Other, so that a create body cannot grow
// the replicated state without bound.
const (
	MaxOtherHints      = 32
	MaxOtherHintValues = 32
	MaxHintValueLen    = 255
)

// Honoured reports whether h carries a hint the scheduler acts on.
func (h *SchedulerHints) Honoured() bool {
	return h != nil && (h.Group != "" || len(h.SameHost) > 0 || len(h.DifferentHost) > 0)
}

// Empty reports whether h carries no hint at all.
func (h *SchedulerHints) Empty() bool {
	return !h.Honoured() && (h == nil || len(h.Other) == 0)
}

// ValidateOther checks the kept hints against the limits above.
func (h *SchedulerHints) ValidateOther() error {
	if h == nil {
		return nil
	}
	if len(h.Other) > MaxOtherHints {
		return Errorf(KindInvalid, "at most %d scheduler hints other than group, same_host and different_host are kept; %d were given", MaxOtherHints, len(h.Other))
	}
	for k, vs := range h.Other {
		if k == "" || len(k) > MaxHintValueLen {
			return Errorf(KindInvalid, "scheduler hint name %q must be 1 to %d characters", k, MaxHintValueLen)
		}
		if len(vs) > MaxOtherHintValues {
			return Errorf(KindInvalid, "scheduler hint %s has %d values; at most %d are kept", k, len(vs), MaxOtherHintValues)
		}
		for _, v := range vs {
			if len(v) > MaxHintValueLen {
				return Errorf(KindInvalid, "a value of scheduler hint %s is %d characters; at most %d are kept", k, len(v), MaxHintValueLen)
			}
		}
	}
	return nil
}

// Copy returns a deep copy.
func (h *SchedulerHints) Copy() *SchedulerHints {
	if h == nil {
		return nil
	}
	c := *h
	c.SameHost = append([]string(nil), h.SameHost...)
	c.DifferentHost = append([]string(nil), h.DifferentHost...)
	if h.Other != nil {
		c.Other = make(map[string][]string, len(h.Other))
		for k, v := range h.Other {
			c.Other[k] = append([]string(nil), v...)
		}
	}
	return &c
}
