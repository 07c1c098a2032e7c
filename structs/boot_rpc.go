package structs

import "time"

// RPC requests and responses of the boot path.

// HostRegisterRequest registers a host (an agent calls it at start and
// whenever its fingerprint changes).
type HostRegisterRequest struct {
	Host *Host
	// IntroToken introduces a host the servers do not know yet (its
	// first registration, with ACLs on): a token of NodeIntroMethod.
	IntroToken string
	WriteRequest
}

// HostRegisterResponse tells the agent how often to heartbeat.
type HostRegisterResponse struct {
	HeartbeatTTL time.Duration
	WriteMeta
}

// HostHeartbeatRequest keeps hosts alive when gossip cannot (the TTL is
// the fallback liveness signal).
type HostHeartbeatRequest struct {
	HostIDs []string
	WriteRequest
}

// HostListRequest lists hosts.
type HostListRequest struct {
	QueryOptions
}

// HostListResponse answers HostListRequest.
type HostListResponse struct {
	Hosts []*Host
	QueryMeta
}

// HostSpecificRequest reads one host by id or name.
type HostSpecificRequest struct {
	HostID string
	QueryOptions
}

// SingleHostResponse answers HostSpecificRequest.
type SingleHostResponse struct {
	Host *Host
	QueryMeta
}

// HostUpdateEnabledRequest enables or disables scheduling onto a host.
type HostUpdateEnabledRequest struct {
	HostID  string
	Enabled bool
	Reason  string
	// Drain, with Enabled false, also moves every instance off the host.
	Drain bool
	WriteRequest
}

// InstanceCreateRequest is a user's request to boot Count instances.
type InstanceCreateRequest struct {
	Name            string
	Description     string
	FlavorID        string // id or name
	ImageID         string
	ImageProperties map[string]string
	AZ              string
	KeyName         string
	Metadata        map[string]string
	Count           int
	// Hints are the scheduler hints (group, same_host, different_host).
	Hints *SchedulerHints
	// TargetHost is the host an admin asked for ("az:host"), name or id.
	TargetHost string
	ProjectID  string
	UserID     string
	// RequestID names the create action of each instance.
	RequestID string
	// IdempotencyKey, when set, makes the create idempotent in its
	// project: a second create with the same key (a client's or the
	// agent's retry) answers the first one's instances instead of
	// creating more (CreateIdempotency).
	IdempotencyKey string `json:",omitempty"`
	// ImageAdmin lets the caller use any image, not only those its
	// project may see (Nova's admins). ImageID names the image by id or,
	// when exactly one image the caller may see has it, by name; once
	// the region has images it must name an active one, and the instance
	// records its id and its properties as ImageProperties.
	ImageAdmin bool
	// InstanceGroup and InstanceGroupVersion make the instances members
	// of an instance group (its reconciler creates them);
	// Constraints and UserData are the group's.
	InstanceGroup        string
	InstanceGroupVersion uint64
	Constraints          []*Constraint
	UserData             string
	// ConfigDrive asks for a config drive (Nova's config_drive).
	ConfigDrive bool
	// Hostname is the guests' host name (one instance only); Tags are
	// their server tags.
	Hostname string
	Tags     []string
	// AccessIPv4 and AccessIPv6 are recorded on every instance.
	AccessIPv4, AccessIPv6 string
	// AutoDiskConfig is OS-DCF:diskConfig (true for AUTO), recorded on
	// every instance; nil takes the image's auto_disk_config property,
	// as Nova does.
	AutoDiskConfig *bool
	// NetworksMode and Networks ask for the instances' NICs (Nova's
	// networks: NetworksDefault, NetworksAuto, NetworksNone or
	// NetworksList); the ports are created, or bound, in the entry that
	// creates the instances. SecurityGroups (names or ids) apply to the
	// ports created, the project's default group when empty. NetAdmin
	// lets the caller attach to external networks, as Nova's admins.
	NetworksMode   string
	Networks       []*InstanceNetworkRequest
	SecurityGroups []string
	NetAdmin       bool
	// BlockDevices are the volumes the instance boots with (one
	// instance only): every one available in the project and kept on
	// the same storage host, where the instance is placed.
	BlockDevices []*BlockDevice `json:",omitempty"`
	// BlockDeviceSets replace BlockDevices in a multi-create: set n is
	// instance n's own new volumes (Nova makes each instance its own
	// volumes from an image, a snapshot or nothing; an existing volume
	// cannot be shared by several instances).
	BlockDeviceSets [][]*BlockDevice `json:",omitempty"`
	WriteRequest
}

// InstanceCreateResponse returns the new instances and their evaluation.
type InstanceCreateResponse struct {
	Instances []*Instance
	EvalID    string
	WriteMeta
}

// InstanceListRequest lists instances, optionally of one host or one
// project.
type InstanceListRequest struct {
	HostID    string
	ProjectID string
	QueryOptions
}

// InstanceListResponse answers InstanceListRequest.
type InstanceListResponse struct {
	Instances []*Instance
	QueryMeta
}

// InstanceSpecificRequest reads one instance.
type InstanceSpecificRequest struct {
	InstanceID string
	QueryOptions
}

// SingleInstanceResponse answers InstanceSpecificRequest.
type SingleInstanceResponse struct {
	Instance   *Instance
	Allocation *Allocation
	QueryMeta
}

// InstanceDeleteRequest deletes instances.
type InstanceDeleteRequest struct {
	InstanceIDs []string
	// Force deletes at once even when soft delete is configured, and
	// deletes soft-deleted instances (Nova's forceDelete).
	Force bool
	// Caller, as for InstanceTaskRequest.
	ProjectID string
	UserID    string
	Admin     bool
	RequestID string
	WriteRequest
}

// InstanceActionRequest asks for a power action: start, stop,
// reboot_soft or reboot_hard.
type InstanceActionRequest struct {
	InstanceID string
	Action     string
	// Caller, as for InstanceTaskRequest.
	ProjectID string
	UserID    string
	Admin     bool
	WriteRequest
}

// AllocHostRequest asks for the allocations of one host.
type AllocHostRequest struct {
	HostID string
	QueryOptions
}

// AllocIndexResponse maps each of a host's allocations to its
// AllocModifyIndex: a light answer an agent diffs before fetching.
type AllocIndexResponse struct {
	Allocs map[string]uint64
	QueryMeta
}

// AllocsGetRequest fetches allocations by id.
type AllocsGetRequest struct {
	AllocIDs []string
	QueryOptions
}

// AllocListResponse carries allocations. For Alloc.GetAllocs it also
// carries the allocations' instances, which an agent needs to build them.
type AllocListResponse struct {
	Allocs    []*Allocation
	Instances []*Instance
	QueryMeta
}

// AllocListRequest lists every allocation, or one instance's, or one
// host's (HostID).
type AllocListRequest struct {
	InstanceID string
	HostID     string
	QueryOptions
}

// AllocUpdateRequest carries a batch of an agent's reports.
type AllocUpdateRequest struct {
	HostID  string
	Updates []*AllocClientUpdate
	WriteRequest
}

// EvalListRequest lists evaluations.
type EvalListRequest struct {
	QueryOptions
}

// EvalListResponse answers EvalListRequest.
type EvalListResponse struct {
	Evals []*Evaluation
	QueryMeta
}

// EvalSpecificRequest reads one evaluation.
type EvalSpecificRequest struct {
	EvalID string
	QueryOptions
}

// SingleEvalResponse answers EvalSpecificRequest.
type SingleEvalResponse struct {
	Eval *Evaluation
	QueryMeta
}

// EvalDequeueRequest asks the leader's broker for an evaluation.
type EvalDequeueRequest struct {
	Timeout time.Duration
	WriteRequest
}

// EvalDequeueResponse carries a delivered evaluation (nil when none was
// ready in time), the token that holds it, and the state index the
// worker must reach before scheduling it.
type EvalDequeueResponse struct {
	Eval      *Evaluation
	Token     string
	WaitIndex uint64
}

// EvalAckRequest acks or nacks a delivered evaluation.
type EvalAckRequest struct {
	EvalID string
	Token  string
	WriteRequest
}

// PlanSubmitRequest carries a worker's plan to the leader's applier.
type PlanSubmitRequest struct {
	Plan *Plan
	WriteRequest
}

// HostAgentExitedRequest tells the leader that the RPC session on which
// an agent's calls named these hosts has closed, so it checks whether
// the agent's process is gone (a call between servers).
type HostAgentExitedRequest struct {
	HostIDs []string
	WriteRequest
}
