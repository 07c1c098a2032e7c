package structs

import (
	"net/netip"
	"slices"
)

// Nova's vm_state values.
const (
	VMStateBuilding         = "building"
	VMStateActive           = "active"
	VMStateStopped          = "stopped"
	VMStatePaused           = "paused"
	VMStateSuspended        = "suspended"
	VMStateResized          = "resized"
	VMStateShelvedOffloaded = "shelved_offloaded"
	VMStateShelved          = "shelved"
	VMStateRescued          = "rescued"
	VMStateSoftDeleted      = "soft-delete"
	VMStateDeleted          = "deleted"
	VMStateError            = "error"
)

// Nova's power_state values.
const (
	PowerNoState  = 0
	PowerRunning  = 1
	PowerPaused   = 3
	PowerShutdown = 4
	PowerCrashed  = 6
	PowerSuspend  = 7
)

// Nova's task_state values.
const (
	TaskScheduling         = "scheduling"
	TaskSpawning           = "spawning"
	TaskDeleting           = "deleting"
	TaskSoftDeleting       = "soft-deleting"
	TaskRestoring          = "restoring"
	TaskPoweringOn         = "powering-on"
	TaskPoweringOff        = "powering-off"
	TaskRebooting          = "rebooting"
	TaskRebootHard         = "rebooting_hard"
	TaskPausing            = "pausing"
	TaskUnpausing          = "unpausing"
	TaskSuspending         = "suspending"
	TaskResuming           = "resuming"
	TaskRescuing           = "rescuing"
	TaskUnrescuing         = "unrescuing"
	TaskRebuilding         = "rebuilding"
	TaskRebuildSpawning    = "rebuild_spawning"
	TaskResizePrep         = "resize_prep"
	TaskResizeMigrating    = "resize_migrating"
	TaskResizeMigrated     = "resize_migrated"
	TaskResizeFinish       = "resize_finish"
	TaskResizeReverting    = "resize_reverting"
	TaskResizeConfirming   = "resize_confirming"
	TaskMigrating          = "migrating"
	TaskShelving           = "shelving"
	TaskShelvingOffloading = "shelving_offloading"
	// TaskShelvingImagePendingUpload and TaskShelvingImageUploading are
	// a shelve's snapshot steps (Nova's names).
	TaskShelvingImagePendingUpload = "shelving_image_pending_upload"
	TaskShelvingImageUploading     = "shelving_image_uploading"
	TaskUnshelving                 = "unshelving"
)

// BuildAttempt is one try at building an instance on a host.
type BuildAttempt struct {
	HostID string
	Error  string
}

// Fault records why an instance went to error.
type Fault struct {
	Code    int
	Message string
	Details string
	// CreatedAt is unix nanoseconds, chosen before proposal.
	CreatedAt int64
}

// Instance is a virtual machine or bare-metal server.
type Instance struct {
	ID        string
	Name      string
	ProjectID string
	UserID    string
	// Description is the user's free-form description (Nova's 2.19).
	Description string

	// ReservationID groups the instances of one create request, as
	// Nova's multi-create does.
	ReservationID string
	// LaunchIndex is the instance's place (from 0) among the instances
	// of its create request (Nova's launch_index).
	LaunchIndex int `json:",omitempty"`

	FlavorID string
	// Flavor is the flavor as it was when the instance was created, so a
	// later flavor change or delete does not change the instance. It is
	// never modified in place.
	Flavor  *Flavor
	ImageID string
	// ImageProperties are the image's properties at create time
	// (architecture, hypervisor_type, …), read by ImagePropertiesFilter.
	ImageProperties map[string]string
	KeyName         string
	AZ              string
	HostID          string

	VMState    string
	TaskState  string
	PowerState int
	Fault      *Fault

	// Attempts lists the hosts a build was tried on and why each failed;
	// the scheduler excludes them when rescheduling.
	Attempts []*BuildAttempt

	Metadata map[string]string

	// Task is the multi-step operation in progress, nil when none. The
	// FSM advances it as agents report and plans commit, so it survives
	// leader changes and agent restarts.
	Task *Task
	// Resize is the finished resize or cold migration awaiting confirm
	// or revert (vm_state resized), nil otherwise.
	Resize *PendingResize

	// Locked forbids non-admin actions; LockedBy is "admin" or "owner".
	Locked       bool
	LockedBy     string
	LockedReason string

	// ServerGroupID is the server group the instance was created in.
	ServerGroupID string
	// Hints are the scheduler hints it was created with.
	Hints *SchedulerHints
	// TargetHostID is the host an admin asked for at create ("az:host");
	// the scheduler's copy of a moving instance carries the move's
	// target here too.
	TargetHostID string

	// InstanceGroup is the instance group (HCL spec) the instance is a
	// member of, "" for none, and InstanceGroupVersion the version of
	// the group it was created from.
	InstanceGroup        string `json:",omitempty"`
	InstanceGroupVersion uint64 `json:",omitempty"`
	// Constraints restrict the hosts it may run on (an instance group's
	// constraint blocks); the scheduler checks them beside the flavor's
	// capabilities: extra specs.
	Constraints []*Constraint `json:",omitempty"`
	// UserData is the user data handed to the guest (cloud-init).
	UserData string `json:",omitempty"`
	// Hostname is the guest's host name (Nova's hostname, 2.90); empty
	// means one derived from the name (see GuestHostname).
	Hostname string `json:",omitempty"`
	// Tags are the user's server tags (Nova's, 2.26), sorted, unique.
	Tags []string `json:",omitempty"`
	// AccessIPv4 and AccessIPv6 are the addresses a user recorded as
	// the instance's public ones (Nova's accessIPv4/accessIPv6); Stratus
	// only stores and shows them.
	AccessIPv4 string `json:",omitempty"`
	AccessIPv6 string `json:",omitempty"`
	// ConfigDrive is set when the request asked for a config drive
	// (Nova's config_drive); the flavor's and image's properties may
	// ask for one too (see NeedsConfigDrive).
	ConfigDrive bool `json:",omitempty"`
	// AutoDiskConfig is Nova's auto_disk_config (OS-DCF:diskConfig AUTO):
	// the guest's root partition is grown to the disk.
	AutoDiskConfig bool `json:",omitempty"`
	// SystemMetadata is Nova's system metadata: values the services
	// keep about the instance that users do not edit (the guest's
	// encrypted password, password_0 … password_3).
	SystemMetadata map[string]string `json:",omitempty"`
	// BlockDevices are the volumes the instance was created with
	// (Nova's block_device_mapping_v2 with destination volume): its root
	// disk when one has boot index 0 (boot from volume), and data
	// volumes attached from its first boot.
	BlockDevices []*BlockDevice `json:",omitempty"`
	// VolumeBuild is set while the instance waits for the volumes its
	// create made (boot_volume_build.go); it is not scheduled before.
	VolumeBuild *VolumeBuild `json:",omitempty"`

	// ShelvedAt is when it was shelved, DeletedAt when it was soft
	// deleted (unix nanoseconds), for the offload and reclaim timers.
	ShelvedAt int64
	DeletedAt int64
	// LaunchedAt is when the guest was last launched (first ACTIVE, and
	// again after a rebuild, rescue, unshelve, resize or revert) and
	// TerminatedAt when it was deleted (unix nanoseconds, from the Raft
	// entry; Nova's launched_at and terminated_at).
	LaunchedAt   int64 `json:",omitempty"`
	TerminatedAt int64 `json:",omitempty"`

	CreatedAt int64
	UpdatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (i *Instance) Copy() *Instance {
	if i == nil {
		return nil
	}
	c := *i
	// Flavor is the immutable snapshot taken at create time (a resize
	// swaps the pointer), so copies share it instead of cloning its map.
	if i.Fault != nil {
		f := *i.Fault
		c.Fault = &f
	}
	c.Metadata = copyStringMap(i.Metadata)
	c.SystemMetadata = copyStringMap(i.SystemMetadata)
	c.Tags = slices.Clone(i.Tags)
	c.BlockDevices = copyBlockDevices(i.BlockDevices)
	c.VolumeBuild = i.VolumeBuild.Copy()
	c.Task = i.Task.Copy()
	if i.Resize != nil {
		r := *i.Resize
		c.Resize = &r
	}
	c.Hints = i.Hints.Copy()
	c.Constraints = copyConstraints(i.Constraints)
	c.ImageProperties = copyStringMap(i.ImageProperties)
	c.Attempts = make([]*BuildAttempt, len(i.Attempts))
	for k, a := range i.Attempts {
		ac := *a
		c.Attempts[k] = &ac
	}
	if len(c.Attempts) == 0 {
		c.Attempts = nil
	}
	return &c
}

// Status is the API status Nova derives from vm_state and task_state
// (nova.api.openstack.common's state map).
func (i *Instance) Status() string {
	if m, ok := statusByTask[i.VMState]; ok {
		if st, ok := m[i.TaskState]; ok {
			return st
		}
	}
	if st, ok := statusByVMState[i.VMState]; ok {
		return st
	}
	return "UNKNOWN"
}

var statusByVMState = map[string]string{
	VMStateBuilding: "BUILD", VMStateActive: "ACTIVE", VMStateStopped: "SHUTOFF",
	VMStatePaused: "PAUSED", VMStateSuspended: "SUSPENDED", VMStateResized: "VERIFY_RESIZE",
	VMStateRescued: "RESCUE", VMStateShelved: "SHELVED", VMStateShelvedOffloaded: "SHELVED_OFFLOADED",
	VMStateSoftDeleted: "SOFT_DELETED", VMStateDeleted: "DELETED", VMStateError: "ERROR",
}

var resizeTasks = map[string]string{
	TaskResizePrep: "RESIZE", TaskResizeMigrating: "RESIZE", TaskResizeMigrated: "RESIZE", TaskResizeFinish: "RESIZE",
}

var rebuildTasks = map[string]string{TaskRebuilding: "REBUILD", TaskRebuildSpawning: "REBUILD"}

var statusByTask = map[string]map[string]string{
	VMStateActive: merge(map[string]string{
		TaskRebooting: "REBOOT", TaskRebootHard: "HARD_REBOOT", TaskMigrating: "MIGRATING",
	}, resizeTasks, rebuildTasks),
	VMStateStopped:  merge(resizeTasks, rebuildTasks),
	VMStateResized:  {TaskResizeReverting: "REVERT_RESIZE"},
	VMStatePaused:   {TaskMigrating: "MIGRATING"},
	VMStateError:    rebuildTasks,
	VMStateBuilding: {},
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// Stable reports whether no task is in progress.
func (i *Instance) Stable() bool { return i.TaskState == "" && i.Task == nil }

// Resources is what the instance asks of a host: its flavor's standard
// classes plus resources:CUSTOM_X=N extra specs (resources:VCPU=N etc.
// override the standard amounts, as in Nova). An instance booted from a
// volume asks no DISK_GB for its root disk, which lives on the volume,
// as Nova's request spec for a volume-backed instance does (unless the
// flavor sets resources:DISK_GB itself).
func (i *Instance) Resources() (map[string]int64, error) {
	res, err := FlavorResources(i.Flavor)
	if err != nil || i.RootVolume() == nil {
		return res, err
	}
	if _, set := i.Flavor.ExtraSpecs["resources:"+ResourceDiskGB]; set {
		return res, nil
	}
	if d, ok := res[ResourceDiskGB]; ok {
		// Nova's request leaves out a class it asks none of (an amount
		// of 0 would fail a provider's min_unit).
		if d -= int64(i.Flavor.RootGB); d > 0 {
			res[ResourceDiskGB] = d
		} else {
			delete(res, ResourceDiskGB)
		}
	}
	return res, nil
}

// AwaitsPlacement reports whether the instance waits for evalID to place
// it: a new instance not yet on a host, or a move's destination.
func (i *Instance) AwaitsPlacement(evalID string) bool {
	if i.Task != nil {
		return i.Task.Step == StepSchedule && i.Task.EvalID == evalID
	}
	return i.HostID == "" && i.VMState == VMStateBuilding && i.VolumeBuild == nil
}

// ValidateAccessIP checks an access address of the given IP version
// (4 or 6); "" (none) is valid.
func ValidateAccessIP(version int, addr string) error {
	if addr == "" {
		return nil
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil || (version == 4 && !ip.Is4()) || (version == 6 && !ip.Is6()) {
		return Errorf(KindInvalid, "%q is not a valid IPv%d address", addr, version)
	}
	return nil
}
