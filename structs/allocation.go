package structs

// Desired states of an allocation, set by the servers.
const (
	AllocDesiredRunning = "running"
	AllocDesiredStopped = "stopped"
	AllocDesiredDeleted = "deleted"
	// AllocDesiredHeld reserves a destination's resources while a move
	// prepares; the agent leaves it alone until it becomes running or
	// stopped.
	AllocDesiredHeld = "held"
)

// Client states of an allocation, reported by the agent.
const (
	AllocClientPending  = "pending"
	AllocClientSpawning = "spawning"
	AllocClientRunning  = "running"
	AllocClientStopped  = "stopped"
	AllocClientFailed   = "failed"
	AllocClientDeleted  = "deleted"
)

// Allocation actions that are events rather than states. The agent
// carries each out once per ActionSeq and reports ActionDoneSeq with the
// error, if any, in ActionError.
const (
	ActionRebootSoft = "reboot_soft"
	ActionRebootHard = "reboot_hard"
	ActionPause      = "pause"
	ActionUnpause    = "unpause"
	ActionSuspend    = "suspend"
	ActionResume     = "resume"
	// ActionRescue boots the instance from ActionArg (an image id, or
	// the instance's own image when empty), keeping its disk attached.
	ActionRescue   = "rescue"
	ActionUnrescue = "unrescue"
	// ActionRebuild destroys the instance and spawns it again from the
	// instance's (new) image, on the same host.
	ActionRebuild = "rebuild"
	// ActionLiveMigrate sends the running instance to the host whose
	// address is ActionArg; afterwards it no longer exists here.
	ActionLiveMigrate = "live_migrate"
	// ActionTriggerCrashDump injects a non-maskable interrupt so that
	// the guest's kernel dumps its memory (Nova's trigger_crash_dump).
	ActionTriggerCrashDump = "trigger_crash_dump"
)

// Allocation is what one instance consumes on one host, and the contract
// between the servers (desired fields) and the host's agent (client
// fields).
type Allocation struct {
	ID         string
	InstanceID string
	HostID     string
	EvalID     string
	// Resources is the amount of each resource class consumed. It is
	// never changed in place: copies share it (the FSM shares one map
	// among all allocations of equal resources), and a change sets a new
	// map.
	Resources map[string]int64

	// DesiredState is what the servers want: running, stopped, deleted.
	DesiredState string
	// PendingAction is a one-off action (reboot) the agent performs once
	// per ActionSeq, which is the Raft index of the request.
	PendingAction string
	ActionSeq     uint64
	// ActionArg is the pending action's argument (see the Action*
	// constants).
	ActionArg string

	// Flavor, when set, is what this allocation's instance runs with
	// instead of the instance's flavor: the destination of a resize
	// spawns the new flavor before the instance switches to it.
	Flavor *Flavor

	// DiskSource, on a move's destination on another host, is where its
	// agent fetches the instance's disks before it spawns it; nil for a
	// fresh build. It is shared by copies (never changed in place).
	DiskSource *DiskSource `json:",omitempty"`
	// DiskExportToken, on a move's source, is the token its agent
	// requires of the destination fetching the instance's disks; empty
	// when no move may read them. On a live migration's destination it
	// is the token its agent requires of the source asking it to prepare
	// (PrepareDest).
	DiskExportToken string `json:",omitempty"`
	// PrepareDest, on a live migration's source, is the destination's
	// allocation, host, disk export and token: the source's agent asks
	// that agent to prepare (fetch the instance's image into its cache)
	// before the migration starts, so that only what the guest wrote is
	// copied. Nil when the servers drew no token (older servers) or the
	// destination is the same host. Shared by copies like DiskSource.
	PrepareDest *DiskSource `json:",omitempty"`
	// RestoreImageID, on an unshelve's destination, is the shelve's
	// snapshot: the agent builds the root disk from it (a full copy, so
	// the image can go once the instance runs) instead of from the
	// instance's image.
	RestoreImageID string `json:",omitempty"`
	// EvacuateDisk, on an evacuation's destination, says whether its
	// agent rebuilds the instance on the disks the down host left on
	// shared storage (an EvacuateDisk* constant); empty rebuilds from
	// the image without looking.
	EvacuateDisk string `json:",omitempty"`
	// Volumes, on a move's destination (resize, cold migration,
	// evacuation, unshelve), are the volumes attached to the instance
	// as this host reaches them: each volume's file when this is its
	// storage host, else the storage host's NBD export of the
	// attachment. The spawn attaches them in place of the instance's
	// creation-time data volumes (Instance.BlockDevices), whose paths
	// are those of the host it was created on. Nil on any other
	// allocation. Shared by copies (never changed in place).
	Volumes []VolumeActionArg `json:",omitempty"`

	// ClientState, ClientDescription and PowerState are what the agent
	// last reported; ActionDoneSeq is the last ActionSeq it carried out.
	ClientState       string
	ClientDescription string
	PowerState        int
	ActionDoneSeq     uint64
	// ActionError is why the action ActionDoneSeq failed, empty if it
	// succeeded.
	ActionError string

	CreateIndex uint64
	ModifyIndex uint64
	// AllocModifyIndex changes only when the servers change what the
	// agent must do, so agents wake for desired changes and not for
	// their own reports.
	AllocModifyIndex uint64
}

// Copy returns a copy; it shares Resources, Flavor, DiskSource,
// PrepareDest and Volumes, which are never changed in place.
func (a *Allocation) Copy() *Allocation {
	if a == nil {
		return nil
	}
	c := *a
	return &c
}

// Terminal reports whether the allocation no longer consumes resources.
func (a *Allocation) Terminal() bool {
	return a.ClientState == AllocClientDeleted || a.ClientState == AllocClientFailed
}

// AllocClientUpdate is one agent report about one allocation.
type AllocClientUpdate struct {
	AllocID           string
	ClientState       string
	ClientDescription string
	PowerState        int
	ActionDoneSeq     uint64
	ActionError       string
}
