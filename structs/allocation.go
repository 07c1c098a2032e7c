package structs

// Desired states of an allocation, set by the servers.
const (
	AllocDesiredRunning = "running"
	AllocDesiredStopped = "stopped"
	AllocDesiredDeleted = "deleted"
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

// Allocation actions that are events rather than states.
const (
	ActionRebootSoft = "reboot_soft"
	ActionRebootHard = "reboot_hard"
)

// Allocation is what one instance consumes on one host, and the contract
// between the servers (desired fields) and the host's agent (client
// fields).
type Allocation struct {
	ID         string
	InstanceID string
	HostID     string
	EvalID     string
	// Resources is the amount of each resource class consumed.
	Resources map[string]int64

	// DesiredState is what the servers want: running, stopped, deleted.
	DesiredState string
	// PendingAction is a one-off action (reboot) the agent performs once
	// per ActionSeq, which is the Raft index of the request.
	PendingAction string
	ActionSeq     uint64

	// ClientState, ClientDescription and PowerState are what the agent
	// last reported; ActionDoneSeq is the last ActionSeq it carried out.
	ClientState       string
	ClientDescription string
	PowerState        int
	ActionDoneSeq     uint64

	CreateIndex uint64
	ModifyIndex uint64
	// AllocModifyIndex changes only when the servers change what the
	// agent must do, so agents wake for desired changes and not for
	// their own reports.
	AllocModifyIndex uint64
}

// Copy returns a deep copy.
func (a *Allocation) Copy() *Allocation {
	if a == nil {
		return nil
	}
	c := *a
	c.Resources = copyInt64Map(a.Resources)
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
}
