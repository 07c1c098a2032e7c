package scheduler

import "github.com/stratus-cloud/stratus/structs"

// ServerGroupSoftAffinityWeigher prefers the hosts that run the most
// members of the instance's soft-affinity group, as Nova's weigher of
// that name does (Config.SoftAffinityWeightMultiplier, Nova's
// soft_affinity_weight_multiplier).
type ServerGroupSoftAffinityWeigher struct{}

// Name implements Weigher.
func (ServerGroupSoftAffinityWeigher) Name() string { return "ServerGroupSoftAffinityWeigher" }

// Multiplier implements Weigher.
func (ServerGroupSoftAffinityWeigher) Multiplier(cfg Config) float64 {
	return cfg.SoftAffinityWeightMultiplier
}

// Weigh implements Weigher.
func (ServerGroupSoftAffinityWeigher) Weigh(h *HostView, req *Request) float64 {
	if req.groupPolicy() != structs.PolicySoftAffinity {
		return 0
	}
	return float64(req.place.groupCount(h.Host.ID))
}

// ServerGroupSoftAntiAffinityWeigher prefers the hosts that run the
// fewest members of the instance's soft-anti-affinity group, as Nova's
// weigher of that name does (Config.SoftAntiAffinityWeightMultiplier).
type ServerGroupSoftAntiAffinityWeigher struct{}

// Name implements Weigher.
func (ServerGroupSoftAntiAffinityWeigher) Name() string { return "ServerGroupSoftAntiAffinityWeigher" }

// Multiplier implements Weigher.
func (ServerGroupSoftAntiAffinityWeigher) Multiplier(cfg Config) float64 {
	return cfg.SoftAntiAffinityWeightMultiplier
}

// Weigh implements Weigher.
func (ServerGroupSoftAntiAffinityWeigher) Weigh(h *HostView, req *Request) float64 {
	if req.groupPolicy() != structs.PolicySoftAntiAffinity {
		return 0
	}
	return -float64(req.place.groupCount(h.Host.ID))
}
