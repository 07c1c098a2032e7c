package server

import (
	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// The plan applier re-checks hard server group policies the way it
// re-checks capacity: workers schedule concurrently from snapshots that
// cannot see each other's placements, so two evaluations could each put
// a member of one anti-affinity group on the same host. Against the
// newest state plus what the batch already accepted, a placement that
// breaks its group's policy is refused and its worker re-plans it.
//
// What the batch accepted per group rides in the applier's overlay
// (host id → resource class → amount) under a key no host id can have:
// groupOverlayKey(group) → host id → members placed there.

// groupOverlayKey is the overlay entry counting a group's placements.
func groupOverlayKey(groupID string) string { return "\x00server-group/" + groupID }

// groupAllows reports whether inst, placed on hostID, keeps its hard
// server group's policy: anti-affinity, fewer than the group's
// max_server_per_host other members on the host; affinity, no other
// member anywhere but on the host. Soft policies and instances without
// a group (or whose group is gone) always pass.
func groupAllows(state *fsm.StateStore, inst *structs.Instance, hostID string, overlay map[string]map[string]int64) (bool, error) {
	if inst.ServerGroupID == "" {
		return true, nil
	}
	g, err := state.ServerGroupByID(nil, inst.ServerGroupID)
	if err != nil || g == nil || !g.Hard() {
		return true, err
	}
	members, err := state.GroupMembers(nil, g)
	if err != nil {
		return false, err
	}
	batch := overlay[groupOverlayKey(g.ID)]
	switch g.Policy {
	case structs.PolicyAntiAffinity:
		n := batch[hostID]
		for _, m := range members {
			if m.ID == inst.ID {
				continue
			}
			for _, h := range occupiedHosts(m) {
				if h == hostID {
					n++
				}
			}
		}
		return n < int64(g.MaxPerHost()), nil
	case structs.PolicyAffinity:
		elsewhere := false
		for h, n := range batch {
			if n <= 0 {
				continue
			}
			if h == hostID {
				return true, nil
			}
			elsewhere = true
		}
		for _, m := range members {
			if m.ID == inst.ID {
				continue
			}
			for _, h := range occupiedHosts(m) {
				if h == hostID {
					return true, nil
				}
				elsewhere = true
			}
		}
		return !elsewhere, nil
	}
	return true, nil
}

// recordGroupPlacement counts an accepted placement of inst on hostID
// for the rest of the batch.
func recordGroupPlacement(inst *structs.Instance, hostID string, overlay map[string]map[string]int64) {
	if inst.ServerGroupID == "" {
		return
	}
	key := groupOverlayKey(inst.ServerGroupID)
	if overlay[key] == nil {
		overlay[key] = map[string]int64{}
	}
	overlay[key][hostID]++
}
