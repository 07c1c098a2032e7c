package structs

// Nova's vm_state values.
const (
	VMStateBuilding         = "building"
	VMStateActive           = "active"
	VMStateStopped          = "stopped"
	VMStatePaused           = "paused"
	VMStateSuspended        = "suspended"
	VMStateResized          = "resized"
	VMStateShelvedOffloaded = "shelved_offloaded"
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

// Nova's task_state values used so far.
const (
	TaskScheduling  = "scheduling"
	TaskSpawning    = "spawning"
	TaskDeleting    = "deleting"
	TaskPoweringOn  = "powering-on"
	TaskPoweringOff = "powering-off"
	TaskRebooting   = "rebooting"
	TaskRebootHard  = "rebooting_hard"
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

// Status is the API status Nova derives from vm_state and task_state.
func (i *Instance) Status() string {
	switch i.TaskState {
	case TaskRebooting:
		return "REBOOT"
	case TaskRebootHard:
		return "HARD_REBOOT"
	case TaskDeleting:
		if i.VMState != VMStateError {
			return "ACTIVE"
		}
	}
	switch i.VMState {
	case VMStateBuilding:
		return "BUILD"
	case VMStateActive:
		return "ACTIVE"
	case VMStateStopped:
		return "SHUTOFF"
	case VMStatePaused:
		return "PAUSED"
	case VMStateSuspended:
		return "SUSPENDED"
	case VMStateResized:
		return "VERIFY_RESIZE"
	case VMStateShelvedOffloaded:
		return "SHELVED_OFFLOADED"
	case VMStateDeleted:
		return "DELETED"
	case VMStateError:
		return "ERROR"
	}
	return "UNKNOWN"
}

// Resources is what the instance's flavor asks of a host: the standard
// classes plus resources:CUSTOM_X=N extra specs (resources:VCPU=N etc.
// override the standard amounts, as in Nova).
func (i *Instance) Resources() (map[string]int64, error) {
	return FlavorResources(i.Flavor)
}
