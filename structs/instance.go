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

	FlavorID string
	// Flavor is the flavor as it was when the instance was created, so a
	// later flavor change or delete does not change the instance.
	Flavor  *Flavor
	ImageID string
	KeyName string
	AZ      string
	HostID  string

	VMState    string
	TaskState  string
	PowerState int
	Fault      *Fault

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
	c.Flavor = i.Flavor.Copy()
	if i.Fault != nil {
		f := *i.Fault
		c.Fault = &f
	}
	c.Metadata = copyStringMap(i.Metadata)
	return &c
}

// Allocation is what one instance consumes on one host.
type Allocation struct {
	ID         string
	InstanceID string
	HostID     string
	// Resources is the amount of each resource class consumed.
	Resources map[string]int64
	// DesiredStatus is what the servers want (run, stop, delete);
	// ClientStatus is what the agent last reported.
	DesiredStatus string
	ClientStatus  string

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (a *Allocation) Copy() *Allocation {
	if a == nil {
		return nil
	}
	c := *a
	if a.Resources != nil {
		c.Resources = make(map[string]int64, len(a.Resources))
		for k, v := range a.Resources {
			c.Resources[k] = v
		}
	}
	return &c
}

// Evaluation statuses.
const (
	EvalStatusPending  = "pending"
	EvalStatusComplete = "complete"
	EvalStatusFailed   = "failed"
	EvalStatusBlocked  = "blocked"
)

// Evaluation is a unit of scheduling work: decide where (or whether) an
// instance runs.
type Evaluation struct {
	ID                string
	InstanceID        string
	TriggeredBy       string
	Status            string
	StatusDescription string
	Attempt           int

	CreatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a copy.
func (e *Evaluation) Copy() *Evaluation {
	if e == nil {
		return nil
	}
	c := *e
	return &c
}
