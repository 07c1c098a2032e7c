package scheduler

// Filter decides whether a host can take a request, as Nova's host
// filters do. A rejection carries a short reason ("insufficient
// MEMORY_MB", "not in zone az2", …) that NoValidHost explanations count;
// reasons should not vary per host, so the counts add up.
type Filter interface {
	// Name is the filter's Nova name, such as "ComputeFilter".
	Name() string
	// Filter reports whether h passes and, when it does not, why.
	Filter(h *HostView, req *Request) (ok bool, reason string)
}

// applier is implemented by filters that have nothing to check for some
// requests (no zone asked for, no image properties, …); the scheduler
// skips them for those requests.
type applier interface {
	applies(req *Request) bool
}

// DefaultFilters returns the filters Schedule runs, in the order it runs
// them; a host rejected by several counts only for the first.
func DefaultFilters() []Filter {
	return []Filter{
		TargetHostFilter{},
		ComputeFilter{},
		RetryFilter{},
		ResourceFilter{},
		AvailabilityZoneFilter{},
		AggregateMultiTenancyIsolation{},
		AggregateInstanceExtraSpecsFilter{},
		ComputeCapabilitiesFilter{},
		MoveDestinationFilter{},
		ImagePropertiesFilter{},
		TraitsFilter{},
		SameHostFilter{},
		DifferentHostFilter{},
		ServerGroupAntiAffinityFilter{},
		ServerGroupAffinityFilter{},
	}
}

// activeFilters appends to dst the filters of all that apply to req.
func activeFilters(dst, all []Filter, req *Request) []Filter {
	for _, f := range all {
		if a, ok := f.(applier); ok && !a.applies(req) {
			continue
		}
		dst = append(dst, f)
	}
	return dst
}
