package scheduler

// AvailabilityZoneFilter passes only hosts in the availability zone the
// instance asked for, when it asked for one. A host's zone is its
// effective one when the topology is known (an aggregate's, else its
// agent's, else the default zone), else its agent's.
type AvailabilityZoneFilter struct{}

// Name implements Filter.
func (AvailabilityZoneFilter) Name() string { return "AvailabilityZoneFilter" }

func (AvailabilityZoneFilter) applies(req *Request) bool { return req.Instance.AZ != "" }

// Filter implements Filter.
func (AvailabilityZoneFilter) Filter(h *HostView, req *Request) (bool, string) {
	if az := req.Instance.AZ; az != "" && req.hostZone(h) != az {
		if req.zoneReason == "" {
			return false, "not in zone " + az
		}
		return false, req.zoneReason
	}
	return true, ""
}
