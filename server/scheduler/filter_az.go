package scheduler

// AvailabilityZoneFilter passes only hosts in the availability zone the
// instance asked for, when it asked for one.
type AvailabilityZoneFilter struct{}

// Name implements Filter.
func (AvailabilityZoneFilter) Name() string { return "AvailabilityZoneFilter" }

func (AvailabilityZoneFilter) applies(req *Request) bool { return req.Instance.AZ != "" }

// Filter implements Filter.
func (AvailabilityZoneFilter) Filter(h *HostView, req *Request) (bool, string) {
	if az := req.Instance.AZ; az != "" && h.Host.AZ != az {
		if req.zoneReason == "" {
			return false, "not in zone " + az
		}
		return false, req.zoneReason
	}
	return true, ""
}
