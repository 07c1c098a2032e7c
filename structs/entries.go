package structs

// The bodies of the boot path's Raft entries. Each carries everything
// Apply needs, IDs and timestamps included, so Apply stays deterministic.

// HostRegisterEntry registers or refreshes a host.
type HostRegisterEntry struct {
	Host *Host
}

// HostStatusUpdateEntry sets the liveness of hosts (up or down).
type HostStatusUpdateEntry struct {
	HostIDs   []string
	Status    string
	UpdatedAt int64
}

// HostEnabledUpdateEntry enables or disables scheduling onto a host.
type HostEnabledUpdateEntry struct {
	HostID  string
	Enabled bool
	Reason  string
	// Drain starts or records a drain; nil ends any drain (enabling a
	// host cancels its drain).
	Drain *DrainState
}

// InstanceCreateEntry commits new instances and the evaluation that will
// place them, in one entry.
type InstanceCreateEntry struct {
	Instances []*Instance
	Eval      *Evaluation
	// Flavor, when set, is the flavor of every instance whose own
	// Flavor is nil: a multi-create carries it once, not per instance.
	Flavor *Flavor
	// RequestID names each instance's create action; CreatedAt stamps
	// it. No action is recorded when RequestID is empty (old entries).
	RequestID string
	CreatedAt int64
	// Network are the instances' networking changes (their ports, a
	// project's default security group, an auto-allocated topology),
	// applied in the same transaction: the instances never exist
	// without their ports, nor the ports without them.
	Network []*NetChange `json:",omitempty"`
	// Idempotency, when set, applies the create at most once per
	// project and key (CreateIdempotency).
	Idempotency *CreateIdempotency `json:",omitempty"`
	// Volumes are the volumes the instances' block devices make
	// (BlockDevice.Source), created in the same transaction, each
	// MadeFor its instance (boot_volume_build.go).
	Volumes []*Volume `json:",omitempty"`
}

// InstanceDeleteEntry deletes instances: those with a live allocation are
// marked deleting (their agent destroys them and reports back); Purge
// ones are removed at once with their allocations (never placed, or on a
// down host).
type InstanceDeleteEntry struct {
	Deleting  []string
	Purge     []string
	UpdatedAt int64
	// RequestID and UserID record each instance's delete action.
	RequestID string
	UserID    string
}

// InstanceActionEntry asks an instance's agent for a power action.
type InstanceActionEntry struct {
	InstanceID string
	// Action is one of "start", "stop", ActionRebootSoft, ActionRebootHard.
	Action    string
	UpdatedAt int64
}

// AllocClientUpdateEntry records agent reports. Reschedules are the
// evaluations the leader created for failed spawns that have attempts
// left; Faults are instances that ran out of attempts.
type AllocClientUpdateEntry struct {
	HostID      string
	Updates     []*AllocClientUpdate
	Reschedules []*Evaluation
	Faults      map[string]*Fault
	UpdatedAt   int64
}

// EvalUpdateEntry stores evaluations (status changes).
type EvalUpdateEntry struct {
	Evals []*Evaluation
}

// PlanApplyEntry commits what the plan applier accepted from one or more
// plans: new allocations, NoValidHost faults, and the evaluations'
// final status.
type PlanApplyEntry struct {
	Placements []*Allocation
	Faults     map[string]*Fault
	Evals      []*Evaluation
	UpdatedAt  int64
}
