package scheduler

import "github.com/stratus-cloud/stratus/structs"

// ServerGroupAntiAffinityFilter keeps the members of an anti-affinity
// server group apart, as Nova's filter of that name does: a host passes
// while it runs fewer of the group's members than the group's
// max_server_per_host rule (1 without it), counting the members this
// plan already placed. The plan applier checks the same rule again
// against the newest state, since concurrent evaluations cannot see each
// other's placements.
type ServerGroupAntiAffinityFilter struct{}

// Name implements Filter.
func (ServerGroupAntiAffinityFilter) Name() string { return "ServerGroupAntiAffinityFilter" }

func (ServerGroupAntiAffinityFilter) applies(req *Request) bool {
	return req.groupPolicy() == structs.PolicyAntiAffinity
}

// Filter implements Filter.
func (f ServerGroupAntiAffinityFilter) Filter(h *HostView, req *Request) (bool, string) {
	if !f.applies(req) {
		return true, ""
	}
	if req.place.groupCount(h.Host.ID) >= req.place.group.Group.MaxPerHost() {
		return false, "server group anti-affinity"
	}
	return true, ""
}

// ServerGroupAffinityFilter keeps the members of an affinity server
// group together, as Nova's filter of that name does: once a member runs
// somewhere (or this plan placed one), only the hosts that run members
// pass.
type ServerGroupAffinityFilter struct{}

// Name implements Filter.
func (ServerGroupAffinityFilter) Name() string { return "ServerGroupAffinityFilter" }

func (ServerGroupAffinityFilter) applies(req *Request) bool {
	return req.groupPolicy() == structs.PolicyAffinity
}

// Filter implements Filter.
func (f ServerGroupAffinityFilter) Filter(h *HostView, req *Request) (bool, string) {
	if !f.applies(req) {
		return true, ""
	}
	if req.place.groupCount(h.Host.ID) == 0 && req.place.groupHosted() {
		return false, "server group affinity"
	}
	return true, ""
}
