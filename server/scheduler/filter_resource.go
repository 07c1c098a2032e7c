package scheduler

// ResourceFilter passes hosts with room for every resource class the
// request consumes, counting this plan's earlier placements: Placement's
// allocation candidates. It checks VCPU, MEMORY_MB and DISK_GB first,
// then the other classes sorted, and names the first that does not fit
// ("insufficient CUSTOM_FPGA" also when the host has no such inventory).
type ResourceFilter struct{}

// Name implements Filter.
func (ResourceFilter) Name() string { return "ResourceFilter" }

func (ResourceFilter) applies(req *Request) bool { return len(req.classes) > 0 }

// Filter implements Filter.
func (ResourceFilter) Filter(h *HostView, req *Request) (bool, string) {
	for i := range req.classes {
		c := &req.classes[i]
		var ok bool
		if c.std >= 0 {
			ok = h.fitsStd(c.std, c.amount)
		} else {
			ok = h.Fits(c.class, c.amount)
		}
		if !ok {
			return false, c.reason
		}
	}
	return true, ""
}
