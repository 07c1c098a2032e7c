package api

// Allocations reads allocations, what instances consume on hosts.
type Allocations struct{ c *Client }

// Allocations returns a handle on the /v1/allocations endpoints.
func (c *Client) Allocations() *Allocations { return &Allocations{c} }

// Desired states of an allocation.
const (
	AllocDesiredRunning = "running"
	AllocDesiredStopped = "stopped"
	AllocDesiredDeleted = "deleted"
)

// Client states of an allocation.
const (
	AllocClientPending  = "pending"
	AllocClientSpawning = "spawning"
	AllocClientRunning  = "running"
	AllocClientStopped  = "stopped"
	AllocClientFailed   = "failed"
	AllocClientDeleted  = "deleted"
)

// Allocation is what one instance consumes on one host: the servers set
// the desired fields, the host's agent reports the client fields.
type Allocation struct {
	ID         string
	InstanceID string
	HostID     string
	EvalID     string
	// Resources is the amount of each resource class consumed.
	Resources map[string]int64

	// DesiredState is what the servers want: running, stopped, deleted.
	DesiredState string
	// PendingAction is a one-off action (reboot_soft, reboot_hard) the
	// agent performs once per ActionSeq.
	PendingAction string
	ActionSeq     uint64

	// ClientState, ClientDescription and PowerState are what the agent
	// last reported; ActionDoneSeq is the last ActionSeq it carried out.
	ClientState       string
	ClientDescription string
	PowerState        int
	ActionDoneSeq     uint64

	CreateIndex      uint64
	ModifyIndex      uint64
	AllocModifyIndex uint64
}

// List returns all allocations.
func (a *Allocations) List(q *QueryOptions) ([]*Allocation, *QueryMeta, error) {
	return a.ListByHost("", q)
}

// ListByHost returns the allocations of the host with the given ID; an
// empty hostID lists all allocations.
func (a *Allocations) ListByHost(hostID string, q *QueryOptions) ([]*Allocation, *QueryMeta, error) {
	var out []*Allocation
	qm, err := a.c.queryParams("/v1/allocations", hostParam(hostID), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}
