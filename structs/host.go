package structs

// Host states as the leader records them.
const (
	HostStatusInit = "initializing"
	HostStatusUp   = "up"
	HostStatusDown = "down"
)

// Standard resource classes, as Placement names them.
const (
	ResourceVCPU     = "VCPU"
	ResourceMemoryMB = "MEMORY_MB"
	ResourceDiskGB   = "DISK_GB"
)

// Inventory is one resource class a host provides, in Placement's model:
// capacity = (Total - Reserved) * AllocationRatio, consumed in units of
// StepSize between MinUnit and MaxUnit.
type Inventory struct {
	Total           int64
	Reserved        int64
	MinUnit         int64
	MaxUnit         int64
	StepSize        int64
	AllocationRatio float64
}

// Capacity is how much of the class may be allocated in all.
func (i *Inventory) Capacity() int64 {
	return int64(float64(i.Total-i.Reserved) * i.AllocationRatio)
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

	RPCAddr  string
	HTTPAddr string

	Driver            string
	HypervisorType    string
	HypervisorVersion string
	Arch              string

	// Inventories are keyed by resource class (VCPU, MEMORY_MB,
	// DISK_GB, CUSTOM_*).
	Inventories map[string]*Inventory
	Traits      []string
	Attributes  map[string]string

	// StatusUpdatedAt is unix nanoseconds, chosen before proposal.
	StatusUpdatedAt int64

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
	c.Attributes = copyStringMap(h.Attributes)
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
