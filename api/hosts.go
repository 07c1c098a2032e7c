package api

import (
	"net/http"
	"net/url"
)

// Hosts reads hosts (hypervisors) and turns scheduling onto them on and off.
type Hosts struct{ c *Client }

// Hosts returns a handle on the /v1/hosts endpoints.
func (c *Client) Hosts() *Hosts { return &Hosts{c} }

// Host states.
const (
	HostStatusInit = "initializing"
	HostStatusUp   = "up"
	HostStatusDown = "down"
)

// Standard resource classes.
const (
	ResourceVCPU     = "VCPU"
	ResourceMemoryMB = "MEMORY_MB"
	ResourceDiskGB   = "DISK_GB"
)

// Host is a hypervisor and the resource provider it represents.
type Host struct {
	ID     string
	Name   string
	Region string
	AZ     string
	// Status is the liveness the leader recorded: up, down, initializing.
	Status string
	// Enabled is the operator's choice to schedule onto the host.
	Enabled        bool
	DisabledReason string

	RPCAddr  string
	HTTPAddr string
	// GossipMember is the agent process that runs the host.
	GossipMember string

	Driver            string
	HypervisorType    string
	HypervisorVersion string
	Arch              string

	// Inventories are keyed by resource class (VCPU, MEMORY_MB, DISK_GB,
	// CUSTOM_*).
	Inventories map[string]*Inventory
	Traits      []string
	Attributes  map[string]string
	// Usage is how much of each class the host's allocations consume.
	Usage map[string]int64
	// Capacity sums up each class of Inventories; the agent computes it.
	Capacity map[string]*HostCapacity
	// BuildFailures counts recent failed spawns.
	BuildFailures int

	// StatusUpdatedAt is unix nanoseconds.
	StatusUpdatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Inventory is one resource class a host provides, in Placement's model.
type Inventory struct {
	Total           int64
	Reserved        int64
	MinUnit         int64
	MaxUnit         int64
	StepSize        int64
	AllocationRatio float64
}

// HostCapacity is one resource class of a host: its total, how much is
// used, and how much may be allocated in all
// ((Total - Reserved) * AllocationRatio).
type HostCapacity struct {
	Total    int64
	Used     int64
	Capacity int64
}

// hostEnabledRequest is the body of POST /v1/hosts/{id}/disable.
type hostEnabledRequest struct {
	Reason string
}

// List returns all hosts.
func (h *Hosts) List(q *QueryOptions) ([]*Host, *QueryMeta, error) {
	var out []*Host
	qm, err := h.c.query("/v1/hosts", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info returns the host with the given ID or name.
func (h *Hosts) Info(idOrName string, q *QueryOptions) (*Host, *QueryMeta, error) {
	var out Host
	qm, err := h.c.query("/v1/hosts/"+url.PathEscape(idOrName), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}

// Enable lets the scheduler place instances on the host again.
func (h *Hosts) Enable(id string) (*WriteMeta, error) {
	return h.c.write(http.MethodPost, "/v1/hosts/"+url.PathEscape(id)+"/enable", nil, nil, nil)
}

// Disable stops the scheduler from placing instances on the host; its
// instances keep running. reason may be empty.
func (h *Hosts) Disable(id, reason string) (*WriteMeta, error) {
	var body any
	if reason != "" {
		body = &hostEnabledRequest{Reason: reason}
	}
	return h.c.write(http.MethodPost, "/v1/hosts/"+url.PathEscape(id)+"/disable", nil, body, nil)
}
