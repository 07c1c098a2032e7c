package server

import (
	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Placement's checks on the leader (Nova's Placement service role: the
// claim against a resource provider's inventory that makes a scheduling
// decision stick). Workers schedule from snapshots concurrently; the plan
// applier runs every placement through placementAllowed against the
// newest state plus what the batch and commits in flight already took,
// so capacity is never exceeded, whatever the concurrency. The model
// (inventories, capacity) is structs/placement.go; usage accounting on
// commit is fsm/placement_usage.go; hard server group policies are
// placement_groups.go.

// placementAllowed reports whether inst may be placed on host with res:
// the host is up and enabled, res fits its free capacity minus what the
// overlay (host id → class → amount) already holds, and the instance's
// hard server group policy still holds there.
func placementAllowed(state *fsm.StateStore, inst *structs.Instance, host *structs.Host, res map[string]int64, overlay map[string]map[string]int64) (bool, error) {
	if host == nil || !host.Up() || !host.Enabled || !fitsWithOverlay(host, res, overlay[host.ID]) {
		return false, nil
	}
	return groupAllows(state, inst, host.ID, overlay)
}

// fitsWithOverlay checks a placement against a host's free capacity
// minus what the batch already put there.
func fitsWithOverlay(h *structs.Host, res map[string]int64, overlay map[string]int64) bool {
	for class, n := range res {
		inv, ok := h.Inventories[class]
		if !ok {
			return false
		}
		if n < inv.MinUnit || (inv.MaxUnit > 0 && n > inv.MaxUnit) || (inv.StepSize > 1 && n%inv.StepSize != 0) {
			return false
		}
		if h.Usage[class]+overlay[class]+n > inv.Capacity() {
			return false
		}
	}
	return true
}
