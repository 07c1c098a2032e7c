package scheduler

// RetryFilter rejects the hosts an instance's earlier build attempts ran
// on, as Nova's RetryFilter does when rescheduling.
type RetryFilter struct{}

// Name implements Filter.
func (RetryFilter) Name() string { return "RetryFilter" }

func (RetryFilter) applies(req *Request) bool { return len(req.tried) > 0 }

// Filter implements Filter.
func (RetryFilter) Filter(h *HostView, req *Request) (bool, string) {
	for _, id := range req.tried {
		if id == h.Host.ID {
			return false, "already tried"
		}
	}
	return true, ""
}
