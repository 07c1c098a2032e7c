package scheduler

import "github.com/stratus-cloud/stratus/structs"

// Indexes of the standard resource classes in HostView's caches.
const (
	stdVCPU = iota
	stdMemory
	stdDisk
	numStd
)

var stdClasses = [numStd]string{structs.ResourceVCPU, structs.ResourceMemoryMB, structs.ResourceDiskGB}

// stdIndex returns the cache index of a standard class, or -1.
func stdIndex(class string) int {
	switch class {
	case structs.ResourceVCPU:
		return stdVCPU
	case structs.ResourceMemoryMB:
		return stdMemory
	case structs.ResourceDiskGB:
		return stdDisk
	}
	return -1
}

// HostView is a host as one Schedule call sees it: the stored host plus
// the usage of the placements this plan has already made on it (the
// overlay). It caches the inventory and free capacity of the standard
// classes, read on first use: filters and weighers look them up in the
// host's maps once per Schedule call (again only on a host that has just
// taken a placement), and not at all on hosts rejected before the
// resource check (down, disabled, already tried).
type HostView struct {
	// Host is the stored host. It must not be modified.
	Host *structs.Host

	// known has bit k set when inv[k] and free[k] are current.
	known uint8
	inv   [numStd]*structs.Inventory
	free  [numStd]int64
	// overlay is what this plan's placements use on the host; nil until
	// one lands here.
	overlay map[string]int64
}

// NewHostView returns a view of h with an empty overlay.
func NewHostView(h *structs.Host) *HostView {
	return &HostView{Host: h}
}

// std returns the inventory (nil when the host has none) and the free
// amount of standard class k, looking them up on first use.
func (v *HostView) std(k int) (*structs.Inventory, int64) {
	if v.known&(1<<k) == 0 {
		class := stdClasses[k]
		inv := v.Host.Inventories[class]
		free := int64(-1)
		if inv != nil {
			free = inv.Capacity()
			if len(v.Host.Usage) != 0 {
				free -= v.Host.Usage[class]
			}
			if v.overlay != nil {
				free -= v.overlay[class]
			}
		}
		v.inv[k], v.free[k] = inv, free
		v.known |= 1 << k
	}
	return v.inv[k], v.free[k]
}

// Free returns how much of class can still be allocated on the host once
// this plan's placements are counted, or -1 when the host has no
// inventory of it (as structs.Host.Free does).
func (v *HostView) Free(class string) int64 {
	if k := stdIndex(class); k >= 0 {
		_, free := v.std(k)
		return free
	}
	inv := v.Host.Inventories[class]
	if inv == nil {
		return -1
	}
	return inv.Capacity() - v.Host.Usage[class] - v.overlay[class]
}

// Used returns the host's usage of class plus this plan's placements.
func (v *HostView) Used(class string) int64 {
	return v.Host.Usage[class] + v.overlay[class]
}

// Planned returns what this plan's placements use of class on the host.
func (v *HostView) Planned(class string) int64 {
	return v.overlay[class]
}

// Fits reports whether amount of class can be allocated, with the same
// rules as structs.Host.Fits (min/max unit, step size, free capacity)
// but counting this plan's placements.
func (v *HostView) Fits(class string, amount int64) bool {
	if k := stdIndex(class); k >= 0 {
		return v.fitsStd(k, amount)
	}
	inv := v.Host.Inventories[class]
	if inv == nil {
		return false
	}
	return unitsOK(inv, amount) && amount <= inv.Capacity()-v.Host.Usage[class]-v.overlay[class]
}

func (v *HostView) fitsStd(k int, amount int64) bool {
	inv, free := v.std(k)
	return inv != nil && unitsOK(inv, amount) && amount <= free
}

// unitsOK checks amount against the inventory's min/max unit and step.
func unitsOK(inv *structs.Inventory, amount int64) bool {
	if amount < inv.MinUnit || (inv.MaxUnit > 0 && amount > inv.MaxUnit) {
		return false
	}
	return inv.StepSize <= 1 || amount%inv.StepSize == 0
}

// HasTrait reports whether the host has trait t.
func (v *HostView) HasTrait(t string) bool {
	for _, have := range v.Host.Traits {
		if have == t {
			return true
		}
	}
	return false
}

// consume counts a placement's resources against the host.
func (v *HostView) consume(res map[string]int64) {
	if v.overlay == nil {
		v.overlay = make(map[string]int64, len(res))
	}
	for class, n := range res {
		v.overlay[class] += n
	}
	v.known = 0
}
