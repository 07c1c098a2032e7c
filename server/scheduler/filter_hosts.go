package scheduler

// TargetHostFilter passes only the host an admin asked for: at create
// with availability_zone "az:host[:node]" or 2.74's host, or for an
// admin-targeted move (the worker sets Instance.TargetHostID on its copy
// of the moving instance). The other filters still run, so a target
// that cannot take the instance is a NoValidHost, never an overcommit.
type TargetHostFilter struct{}

// Name implements Filter.
func (TargetHostFilter) Name() string { return "TargetHostFilter" }

func (TargetHostFilter) applies(req *Request) bool { return req.Instance.TargetHostID != "" }

// Filter implements Filter.
func (TargetHostFilter) Filter(h *HostView, req *Request) (bool, string) {
	if t := req.Instance.TargetHostID; t != "" && h.Host.ID != t {
		return false, "not the requested host"
	}
	return true, ""
}

// SameHostFilter passes only hosts that run one of the instances named
// by the same_host hint, as Nova's filter of that name does; without the
// hint every host passes.
type SameHostFilter struct{}

// Name implements Filter.
func (SameHostFilter) Name() string { return "SameHostFilter" }

func (SameHostFilter) applies(req *Request) bool {
	return req.Instance.Hints != nil && len(req.Instance.Hints.SameHost) > 0
}

// Filter implements Filter.
func (f SameHostFilter) Filter(h *HostView, req *Request) (bool, string) {
	if !f.applies(req) {
		return true, ""
	}
	if req.place == nil || !req.place.sameHosts[h.Host.ID] {
		return false, "same_host hint"
	}
	return true, ""
}

// DifferentHostFilter rejects hosts that run one of the instances named
// by the different_host hint, as Nova's filter of that name does.
type DifferentHostFilter struct{}

// Name implements Filter.
func (DifferentHostFilter) Name() string { return "DifferentHostFilter" }

func (DifferentHostFilter) applies(req *Request) bool {
	return req.Instance.Hints != nil && len(req.Instance.Hints.DifferentHost) > 0
}

// Filter implements Filter.
func (f DifferentHostFilter) Filter(h *HostView, req *Request) (bool, string) {
	if f.applies(req) && req.place != nil && req.place.differentHosts[h.Host.ID] {
		return false, "different_host hint"
	}
	return true, ""
}
