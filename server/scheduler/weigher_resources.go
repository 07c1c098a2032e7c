package scheduler

// RAMWeigher prefers hosts with more free MEMORY_MB when its multiplier
// (Config.RAMWeightMultiplier) is positive, spreading instances, and
// fewer when it is negative, packing them.
type RAMWeigher struct{}

// Name implements Weigher.
func (RAMWeigher) Name() string { return "RAMWeigher" }

// Multiplier implements Weigher.
func (RAMWeigher) Multiplier(cfg Config) float64 { return cfg.RAMWeightMultiplier }

// Weigh implements Weigher.
func (RAMWeigher) Weigh(h *HostView, _ *Request) float64 { return freeWeight(h, stdMemory) }

// CPUWeigher weighs free VCPU (after the allocation ratio), like
// RAMWeigher, with Config.CPUWeightMultiplier.
type CPUWeigher struct{}

// Name implements Weigher.
func (CPUWeigher) Name() string { return "CPUWeigher" }

// Multiplier implements Weigher.
func (CPUWeigher) Multiplier(cfg Config) float64 { return cfg.CPUWeightMultiplier }

// Weigh implements Weigher.
func (CPUWeigher) Weigh(h *HostView, _ *Request) float64 { return freeWeight(h, stdVCPU) }

// DiskWeigher weighs free DISK_GB, like RAMWeigher, with
// Config.DiskWeightMultiplier.
type DiskWeigher struct{}

// Name implements Weigher.
func (DiskWeigher) Name() string { return "DiskWeigher" }

// Multiplier implements Weigher.
func (DiskWeigher) Multiplier(cfg Config) float64 { return cfg.DiskWeightMultiplier }

// Weigh implements Weigher.
func (DiskWeigher) Weigh(h *HostView, _ *Request) float64 { return freeWeight(h, stdDisk) }

// freeWeight is the free amount of a standard class, 0 without inventory.
func freeWeight(h *HostView, k int) float64 {
	inv, free := h.std(k)
	if inv == nil {
		return 0
	}
	return float64(free)
}
