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

// Optional host capabilities (Host.Capabilities): the operations a
// host's driver supports beyond spawning, powering and deleting.
const (
	HostCapabilityPause       = "pause"
	HostCapabilitySuspend     = "suspend"
	HostCapabilityRescue      = "rescue"
	HostCapabilityResize      = "resize"
	HostCapabilityMigrate     = "migrate"
	HostCapabilityLiveMigrate = "live_migrate"
	HostCapabilitySnapshot    = "snapshot"
	HostCapabilityConsole     = "console_output"
)

// HasCapability reports whether the host's driver supports c.
func (h *Host) HasCapability(c string) bool {
	for _, v := range h.Capabilities {
		if v == c {
			return true
		}
	}
	return false
}

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
	// TunnelIP is the host's tunnel endpoint (VTEP) for tenant networks'
	// VXLAN traffic, empty when its agent wires no dataplane.
	TunnelIP string `json:",omitempty"`
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
	// Capabilities are the optional operations the host's driver
	// supports (the HostCapability constants).
	Capabilities []string
	// Usage is how much of each class the host's allocations consume.
	Usage map[string]int64
	// Capacity sums up each class of Inventories; the agent computes it.
	Capacity map[string]*HostCapacity
	// BuildFailures counts recent failed spawns.
	BuildFailures int

	// Drain is the host's drain (Drain), nil when none was asked for
	// since the host was last enabled.
	Drain *DrainState
	// Allocations is how many allocations are still on the host: what a
	// drain waits for. Only Info sets it.
	Allocations *int `json:",omitempty"`

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

// DrainState is a host's drain: the servers live-migrate (or
// cold-migrate and confirm) every instance off the host, offload shelved
// ones, and mark the drain Complete when no allocation is left.
type DrainState struct {
	// StartedAt and CompletedAt are unix nanoseconds.
	StartedAt   int64
	Complete    bool
	CompletedAt int64
}

// Draining reports whether a drain of the host is in progress.
func (h *Host) Draining() bool { return h.Drain != nil && !h.Drain.Complete }

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

// Enable lets the scheduler place instances on the host again, and
// cancels its drain if one is in progress (instances already moved stay
// where they are).
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

// Drain disables the host and has the servers move every instance off it:
// running ones are live-migrated where the host's driver supports it,
// else cold-migrated and confirmed; shelved ones are offloaded. Follow it
// with Info (Drain.Complete, Allocations); Enable cancels it. reason may
// be empty ("draining").
func (h *Hosts) Drain(id, reason string) (*WriteMeta, error) {
	var body any
	if reason != "" {
		body = &hostEnabledRequest{Reason: reason}
	}
	return h.c.write(http.MethodPost, "/v1/hosts/"+url.PathEscape(id)+"/drain", nil, body, nil)
}
