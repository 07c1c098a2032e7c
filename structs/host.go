package structs

import (
	"fmt"
	"net/netip"
	"slices"
)

// Host states as the leader records them.
const (
	HostStatusInit = "initializing"
	HostStatusUp   = "up"
	HostStatusDown = "down"
)

// Optional host capabilities, from the driver's virt.Capabilities.
const (
	HostCapabilityPause       = "pause"
	HostCapabilitySuspend     = "suspend"
	HostCapabilityRescue      = "rescue"
	HostCapabilityResize      = "resize"
	HostCapabilityMigrate     = "migrate"
	HostCapabilityLiveMigrate = "live_migrate"
	HostCapabilitySnapshot    = "snapshot"
	HostCapabilityConsole     = "console_output"
	HostCapabilityCrashDump   = "crash_dump"
	HostCapabilityPassword    = "set_password"
	// HostCapabilityVolumes marks a storage host: its agent keeps a
	// volume pool (client config storage { pool_dir = … }).
	HostCapabilityVolumes = "volumes"
)

// HostAttrStorageCapacityGB is the attribute in which a storage host
// gives its pool's size in GiB.
const HostAttrStorageCapacityGB = "storage_capacity_gb"

// HostAttrStorageNBDAddress is the attribute in which a storage host
// gives the address (host:port) of its NBD server, which serves its
// volumes, over TLS, to instances on other hosts. A storage host
// without it serves only instances on itself.
const HostAttrStorageNBDAddress = "storage_nbd_address"

// HasCapability reports whether the host's driver supports c.
func (h *Host) HasCapability(c string) bool {
	for _, v := range h.Capabilities {
		if v == c {
			return true
		}
	}
	return false
}

// Host is a hypervisor (or a bare-metal node, or a vCenter cluster) and
// the resource provider it represents.
type Host struct {
	ID     string
	Name   string
	Region string
	AZ     string
	// Status is the liveness the leader recorded (up, down, initializing).
	Status string
	// Enabled is the operator's choice to schedule onto the host.
	Enabled        bool
	DisabledReason string
	// ForcedDown is an operator's word that the host is down whatever
	// its agent says (Nova's forced_down, used to fence a host before
	// evacuating it); Up is false while it is set.
	ForcedDown bool `json:",omitempty"`

	RPCAddr  string
	HTTPAddr string
	// TunnelIP is the host's tunnel endpoint (VTEP): the underlay
	// address other hosts send its tenant networks' VXLAN traffic to.
	// Empty for a host whose agent wires no dataplane; such a host takes
	// no part in the overlay.
	TunnelIP string `json:",omitempty"`

	Driver            string
	HypervisorType    string
	HypervisorVersion string
	Arch              string

	// Inventories are keyed by resource class (VCPU, MEMORY_MB,
	// DISK_GB, CUSTOM_*).
	Inventories map[string]*Inventory
	Traits      []string
	Attributes  map[string]string
	// Capabilities are the optional operations the host's driver
	// supports (HostCapability* values).
	Capabilities []string

	// GossipMember is the name of the gossip member (the agent process)
	// that runs this host. Its failure marks the host down; several
	// simulated hosts may share one agent.
	GossipMember string

	// Usage is how much of each resource class the host's allocations
	// consume. The FSM keeps it in step with the allocations table so
	// the scheduler reads it without summing allocations.
	Usage map[string]int64
	// BuildFailures counts recent failed spawns (BuildFailureWeigher); a
	// successful spawn resets it.
	BuildFailures int

	// AllocsIndex is the Raft index at which the servers last changed
	// what this host's agent must do (an allocation added, removed, or
	// its desired state changed). Agents block on it.
	AllocsIndex uint64

	// Drain is the operator's request to move everything off the host,
	// nil when none.
	Drain *DrainState

	// StatusUpdatedAt is unix nanoseconds, chosen before proposal.
	StatusUpdatedAt int64

	// SecretHash is the SHA-256 of the node secret the host's agent
	// registered with (HashNodeSecret); every later call of that agent
	// about the host must present the same secret. Empty for a host
	// registered without one (an older agent): the first registration
	// presenting a secret claims it. The servers set it, never the
	// agent's record, and never answer it (Host.List and Host.Get leave
	// it empty); deregistering the host clears it.
	SecretHash []byte `json:",omitempty"`

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (h *Host) Copy() *Host {
	if h == nil {
		return nil
	}
	c := *h
	if h.Inventories != nil {
		c.Inventories = make(map[string]*Inventory, len(h.Inventories))
		for k, v := range h.Inventories {
			inv := *v
			c.Inventories[k] = &inv
		}
	}
	c.Traits = append([]string(nil), h.Traits...)
	c.Capabilities = append([]string(nil), h.Capabilities...)
	c.Usage = copyInt64Map(h.Usage)
	if h.Drain != nil {
		d := *h.Drain
		c.Drain = &d
	}
	c.Attributes = copyStringMap(h.Attributes)
	c.SecretHash = slices.Clone(h.SecretHash)
	return &c
}

func copyStringMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func copyInt64Map(m map[string]int64) map[string]int64 {
	if m == nil {
		return nil
	}
	c := make(map[string]int64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Validate checks a host record an agent registers.
func (h *Host) Validate() error {
	if h.ID == "" || h.Name == "" {
		return Errorf(KindInvalid, "host needs an id and a name")
	}
	for class, inv := range h.Inventories {
		if inv == nil || inv.Total < 0 || inv.Reserved < 0 || inv.MinUnit < 0 || inv.MaxUnit < 0 || inv.StepSize < 0 || inv.AllocationRatio <= 0 {
			return Errorf(KindInvalid, "host %s: inventory %s has a negative amount or a non-positive allocation ratio", h.Name, class)
		}
	}
	if err := ValidTunnelIP(h.TunnelIP); h.TunnelIP != "" && err != nil {
		return Errorf(KindInvalid, "host %s: %v", h.Name, err)
	}
	return nil
}

// ValidTunnelIP checks a tunnel endpoint: a unicast address other hosts
// can send to (not unspecified, loopback excepted for single-machine
// setups, not multicast or link-local).
func ValidTunnelIP(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return fmt.Errorf("tunnel endpoint %q is not an IP address", s)
	}
	if a.IsUnspecified() || a.IsMulticast() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() {
		return fmt.Errorf("tunnel endpoint %s is not a unicast address other hosts can reach", s)
	}
	return nil
}

// Up reports whether the scheduler may place work on the host.
func (h *Host) Up() bool { return h.Status == HostStatusUp && !h.ForcedDown }

// DrainState is a host's drain: the leader live-migrates (or
// cold-migrates and confirms) every instance off it, offloads shelved
// ones, and marks it complete when no allocation is left.
type DrainState struct {
	StartedAt   int64
	Complete    bool
	CompletedAt int64
}
