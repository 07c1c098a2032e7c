package scheduler

// TraitsFilter passes hosts that have every required trait (the flavor's
// trait:X=required extra specs and the image's trait:X=required
// properties) and none of the forbidden ones (trait:X=forbidden), as
// Placement's required and forbidden traits do.
type TraitsFilter struct{}

// Name implements Filter.
func (TraitsFilter) Name() string { return "TraitsFilter" }

func (TraitsFilter) applies(req *Request) bool {
	return len(req.RequiredTraits) > 0 || len(req.ForbiddenTraits) > 0
}

// Filter implements Filter.
func (TraitsFilter) Filter(h *HostView, req *Request) (bool, string) {
	for i, t := range req.RequiredTraits {
		if !h.HasTrait(t) {
			return false, reasonAt(req.missingReasons, i, "missing trait ", t)
		}
	}
	for i, t := range req.ForbiddenTraits {
		if h.HasTrait(t) {
			return false, reasonAt(req.forbiddenReasons, i, "forbidden trait ", t)
		}
	}
	return true, ""
}

// reasonAt returns the precomputed reason i, or builds it for a Request
// not made by NewRequest.
func reasonAt(reasons []string, i int, prefix, name string) string {
	if i < len(reasons) {
		return reasons[i]
	}
	return prefix + name
}
