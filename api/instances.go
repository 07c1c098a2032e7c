package api

import (
	"net/http"
	"net/url"
)

// Instances manages instances, the virtual machines of the cloud.
type Instances struct{ c *Client }

// Instances returns a handle on the /v1/instances endpoints.
func (c *Client) Instances() *Instances { return &Instances{c} }

// Nova's power states, the values of Instance.PowerState and
// Allocation.PowerState.
const (
	PowerNoState  = 0
	PowerRunning  = 1
	PowerPaused   = 3
	PowerShutdown = 4
	PowerCrashed  = 6
	PowerSuspend  = 7
)

// Instance actions for Instances.Action.
const (
	ActionStart  = "start"
	ActionStop   = "stop"
	ActionReboot = "reboot"
)

// Instance is a virtual machine or bare-metal server.
type Instance struct {
	ID        string
	Name      string
	ProjectID string
	UserID    string
	// ReservationID groups the instances of one create request.
	ReservationID string

	FlavorID string
	// Flavor is the flavor as it was when the instance was created.
	Flavor          *Flavor
	ImageID         string
	ImageProperties map[string]string
	KeyName         string
	AZ              string
	HostID          string

	// VMState, TaskState and PowerState are Nova's vm_state, task_state
	// and power_state.
	VMState    string
	TaskState  string
	PowerState int
	// Fault says why the instance went to ERROR.
	Fault *Fault
	// Attempts lists the hosts a build was tried on and why each failed.
	Attempts []*BuildAttempt

	Metadata map[string]string

	// Task is the multi-step operation in progress (Perform), nil when
	// none.
	Task *Task `json:",omitempty"`
	// Resize is a finished resize or cold migration awaiting confirm or
	// revert (Status VERIFY_RESIZE), nil otherwise.
	Resize *PendingResize `json:",omitempty"`

	// Locked forbids non-admin operations; LockedBy is "admin" or
	// "owner".
	Locked       bool
	LockedBy     string `json:",omitempty"`
	LockedReason string `json:",omitempty"`

	// ShelvedAt and DeletedAt are when the instance was shelved or soft
	// deleted (unix nanoseconds), 0 otherwise.
	ShelvedAt int64 `json:",omitempty"`
	DeletedAt int64 `json:",omitempty"`

	// InstanceGroup is the instance group the instance is a member of
	// ("" for none), InstanceGroupVersion the group version it was
	// created from.
	InstanceGroup        string `json:",omitempty"`
	InstanceGroupVersion uint64 `json:",omitempty"`

	// CreatedAt and UpdatedAt are unix nanoseconds.
	CreatedAt int64
	UpdatedAt int64

	// Status is the API status Nova derives from the states: BUILD,
	// ACTIVE, SHUTOFF, PAUSED, SUSPENDED, REBOOT, HARD_REBOOT, RESIZE,
	// VERIFY_RESIZE, REVERT_RESIZE, MIGRATING, REBUILD, RESCUE, SHELVED,
	// SHELVED_OFFLOADED, SOFT_DELETED, ERROR, …
	Status string

	CreateIndex uint64
	ModifyIndex uint64

	// Allocation is the instance's allocation; only Info sets it, and
	// only once the instance is placed.
	Allocation *Allocation `json:",omitempty"`
}

// Fault records why an instance went to error.
type Fault struct {
	Code    int
	Message string
	Details string
	// CreatedAt is unix nanoseconds.
	CreatedAt int64
}

// BuildAttempt is one try at building an instance on a host.
type BuildAttempt struct {
	HostID string
	Error  string
}

// InstanceCreateRequest asks to boot Count instances.
type InstanceCreateRequest struct {
	Name string
	// Flavor is the flavor's id or name.
	Flavor          string
	Image           string
	ImageProperties map[string]string `json:",omitempty"`
	AZ              string            `json:",omitempty"`
	KeyName         string            `json:",omitempty"`
	Metadata        map[string]string `json:",omitempty"`
	// Count is how many instances to boot; 0 means 1.
	Count int `json:",omitempty"`
}

// InstanceCreateResponse is the answer of Create: the new instances, all
// in BUILD, and the evaluation that schedules them.
type InstanceCreateResponse struct {
	Instances []*Instance
	EvalID    string
}

// instanceActionRequest is the body of POST /v1/instances/{id}/actions.
type instanceActionRequest struct {
	Action string
	Hard   bool `json:",omitempty"`
}

// List returns all instances.
func (i *Instances) List(q *QueryOptions) ([]*Instance, *QueryMeta, error) {
	return i.ListByHost("", q)
}

// ListByHost returns the instances on the host with the given ID; an
// empty hostID lists all instances.
func (i *Instances) ListByHost(hostID string, q *QueryOptions) ([]*Instance, *QueryMeta, error) {
	var out []*Instance
	qm, err := i.c.queryParams("/v1/instances", hostParam(hostID), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info returns the instance with the given ID, with its allocation.
func (i *Instances) Info(id string, q *QueryOptions) (*Instance, *QueryMeta, error) {
	var out Instance
	qm, err := i.c.query("/v1/instances/"+url.PathEscape(id), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Create boots instances. They are scheduled asynchronously: watch them
// leave BUILD with blocking queries.
func (i *Instances) Create(req *InstanceCreateRequest) (*InstanceCreateResponse, *WriteMeta, error) {
	var out InstanceCreateResponse
	wm, err := i.c.write(http.MethodPost, "/v1/instances", nil, req, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Delete deletes the instance with the given ID. When the servers keep
// deleted instances for a while (soft delete), the instance goes to
// SOFT_DELETED and OpRestore brings it back; ForceDelete deletes at once.
func (i *Instances) Delete(id string) (*WriteMeta, error) {
	return i.c.delete("/v1/instances/"+url.PathEscape(id), nil)
}

// ForceDelete deletes the instance with the given ID at once, even when
// soft delete is configured or the instance is already soft deleted
// (Nova's forceDelete).
func (i *Instances) ForceDelete(id string) (*WriteMeta, error) {
	return i.c.delete("/v1/instances/"+url.PathEscape(id), url.Values{"force": {"true"}})
}

// Action asks for a power action on an instance: ActionStart, ActionStop
// or ActionReboot; hard makes a reboot a hard one. Perform does the same
// and every other operation, and says how to follow it.
func (i *Instances) Action(id, action string, hard bool) (*WriteMeta, error) {
	return i.c.write(http.MethodPost, "/v1/instances/"+url.PathEscape(id)+"/actions", nil,
		&instanceActionRequest{Action: action, Hard: hard}, nil)
}

// hostParam is the ?host= filter of list endpoints; nil when hostID is "".
func hostParam(hostID string) url.Values {
	if hostID == "" {
		return nil
	}
	return url.Values{"host": {hostID}}
}

// queryParams is query with URL parameters besides the blocking-query ones.
func (c *Client) queryParams(path string, params url.Values, out any, q *QueryOptions) (*QueryMeta, error) {
	h, err := c.doJSON(&request{method: http.MethodGet, path: path, params: params, query: q}, nil, out)
	if err != nil {
		return nil, err
	}
	return parseQueryMeta(h)
}
