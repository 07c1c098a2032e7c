package structs

import (
	"fmt"
	"math"
)

// SchedulerConfiguration is the operator's replicated setting of the
// scheduler's tunables, named after Nova's [filter_scheduler] options.
// Once set it overrides every server's configuration file, so all
// servers place alike and a change needs no restart (as Nomad's
// `operator scheduler set-config`).
type SchedulerConfiguration struct {
	// RAMWeightMultiplier, CPUWeightMultiplier and DiskWeightMultiplier
	// scale the resource weighers: positive spreads instances, negative
	// packs them, 0 ignores the resource.
	RAMWeightMultiplier  float64
	CPUWeightMultiplier  float64
	DiskWeightMultiplier float64
	// BuildFailureWeightMultiplier scales the weigher that avoids hosts
	// with recent build failures.
	BuildFailureWeightMultiplier float64
	// SoftAffinityWeightMultiplier and SoftAntiAffinityWeightMultiplier
	// scale the soft server-group weighers.
	SoftAffinityWeightMultiplier     float64
	SoftAntiAffinityWeightMultiplier float64
	// HostSubsetSize is how many of the best hosts an instance is placed
	// among at random (1 or more).
	HostSubsetSize int

	CreateIndex uint64
	ModifyIndex uint64
}

// Validate checks the values an operator may set.
func (c *SchedulerConfiguration) Validate() error {
	if c == nil {
		return Errorf(KindInvalid, "no scheduler configuration")
	}
	if c.HostSubsetSize < 1 {
		return Errorf(KindInvalid, "host_subset_size must be 1 or more, not %d", c.HostSubsetSize)
	}
	for name, v := range map[string]float64{
		"ram_weight_multiplier": c.RAMWeightMultiplier, "cpu_weight_multiplier": c.CPUWeightMultiplier,
		"disk_weight_multiplier": c.DiskWeightMultiplier, "build_failure_weight_multiplier": c.BuildFailureWeightMultiplier,
		"soft_affinity_weight_multiplier": c.SoftAffinityWeightMultiplier, "soft_anti_affinity_weight_multiplier": c.SoftAntiAffinityWeightMultiplier,
	} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Errorf(KindInvalid, "%s must be a finite number", name)
		}
	}
	if c.SoftAffinityWeightMultiplier < 0 || c.SoftAntiAffinityWeightMultiplier < 0 {
		return Errorf(KindInvalid, "the soft affinity weight multipliers must not be negative")
	}
	return nil
}

// Copy returns a copy of c.
func (c *SchedulerConfiguration) Copy() *SchedulerConfiguration {
	if c == nil {
		return nil
	}
	out := *c
	return &out
}

// SchedulerSetConfigRequest sets the scheduler configuration; with CAS
// only if it is still at CheckIndex (0: never set).
type SchedulerSetConfigRequest struct {
	Config     SchedulerConfiguration
	CAS        bool
	CheckIndex uint64
	WriteRequest
}

// SchedulerSetConfigEntry is the Raft entry of a set.
type SchedulerSetConfigEntry struct {
	Config     *SchedulerConfiguration
	CAS        bool
	CheckIndex uint64
}

// SchedulerSetConfigResponse says whether the set happened (false: the
// check index did not match) and at which index.
type SchedulerSetConfigResponse struct {
	Updated bool
	Index   uint64
}

// SchedulerConfigResponse answers Operator.SchedulerGetConfiguration:
// the configuration in force, and whether it came from replicated state
// (Source "operator") or the answering server's file ("config").
type SchedulerConfigResponse struct {
	Config *SchedulerConfiguration
	Source string
	QueryMeta
}

// String describes the configuration for logs.
func (c *SchedulerConfiguration) String() string {
	return fmt.Sprintf("ram=%g cpu=%g disk=%g build_failure=%g subset=%d", c.RAMWeightMultiplier, c.CPUWeightMultiplier,
		c.DiskWeightMultiplier, c.BuildFailureWeightMultiplier, c.HostSubsetSize)
}
