package scheduler

// ComputeFilter passes hosts that are up and enabled: Nova's
// ComputeFilter (service up, not disabled).
type ComputeFilter struct{}

// Name implements Filter.
func (ComputeFilter) Name() string { return "ComputeFilter" }

// Filter implements Filter.
func (ComputeFilter) Filter(h *HostView, _ *Request) (bool, string) {
	if !h.Host.Up() {
		return false, "host down"
	}
	if !h.Host.Enabled {
		return false, "disabled"
	}
	return true, ""
}
