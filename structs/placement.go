package structs

// Placement's model, as Nova's Placement service has it: a host is a
// resource provider with an inventory per resource class (VCPU,
// MEMORY_MB, DISK_GB, custom classes), each with total, reserved,
// min/max unit, step size and allocation ratio; an allocation is what an
// instance consumes of them. The scheduler's resource filter
// (server/scheduler), the leader's placement check (server/placement.go)
// and the FSM's usage accounting (fsm/placement_usage.go) all read
// capacity through Inventory.Capacity, so they never disagree on it.

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

// Nova's default allocation ratios and reservations
// (initial_*_allocation_ratio, reserved_host_memory_mb).
const (
	DefaultCPUAllocationRatio  = 4.0
	DefaultRAMAllocationRatio  = 1.0
	DefaultDiskAllocationRatio = 1.0
	DefaultReservedMemoryMB    = 512
)

// Free returns how much of class can still be allocated, or -1 when the
// host has no inventory of it.
func (h *Host) Free(class string) int64 {
	inv, ok := h.Inventories[class]
	if !ok {
		return -1
	}
	return inv.Capacity() - h.Usage[class]
}

// Fits reports whether amount of class can be allocated: within min/max
// unit, a multiple of the step size, and within the free capacity.
func (h *Host) Fits(class string, amount int64) bool {
	inv, ok := h.Inventories[class]
	if !ok {
		return false
	}
	if amount < inv.MinUnit || (inv.MaxUnit > 0 && amount > inv.MaxUnit) {
		return false
	}
	if inv.StepSize > 1 && amount%inv.StepSize != 0 {
		return false
	}
	return amount <= inv.Capacity()-h.Usage[class]
}
