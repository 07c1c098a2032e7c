package server

import (
	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/server/scheduler"
	"github.com/stratus-cloud/stratus/structs"
)

// Topology implements scheduler.TopologyState: the zones and aggregates
// of the hosts, the server groups of the instances being scheduled with
// where their other members run, and where the instances their
// same_host/different_host hints name run — all from the worker's
// snapshot, so the scheduler stays a pure function of what it is given.
func (s stateHosts) Topology(insts []*structs.Instance) (*scheduler.Topology, error) {
	topo := &scheduler.Topology{
		DefaultZone:    structs.DefaultAvailabilityZone,
		HostZones:      map[string]string{},
		HostAggregates: map[string][]*structs.Aggregate{},
		Groups:         map[string]*scheduler.GroupPlacement{},
		InstanceHosts:  map[string][]string{},
	}
	aggs, err := s.state.Aggregates(nil)
	if err != nil {
		return nil, err
	}
	for _, a := range aggs {
		az := a.AZ()
		for _, h := range a.Hosts {
			topo.HostAggregates[h] = append(topo.HostAggregates[h], a)
			if _, set := topo.HostZones[h]; az != "" && !set {
				topo.HostZones[h] = az
			}
		}
	}
	pending := make(map[string]bool, len(insts))
	for _, inst := range insts {
		pending[inst.ID] = true
	}
	for _, inst := range insts {
		if gid := inst.ServerGroupID; gid != "" && topo.Groups[gid] == nil {
			gp, err := groupPlacement(s.state, gid, pending)
			if err != nil {
				return nil, err
			}
			if gp != nil {
				topo.Groups[gid] = gp
			}
		}
		if h := inst.Hints; h != nil {
			for _, ids := range [][]string{h.SameHost, h.DifferentHost} {
				for _, id := range ids {
					if _, done := topo.InstanceHosts[id]; done {
						continue
					}
					other, err := s.state.InstanceByID(nil, id)
					if err != nil {
						return nil, err
					}
					topo.InstanceHosts[id] = occupiedHosts(other)
				}
			}
		}
	}
	return topo, nil
}

// groupPlacement counts, per host, the members of a group that are not
// being scheduled now; nil when the group is gone.
func groupPlacement(state *fsm.StateStore, gid string, pending map[string]bool) (*scheduler.GroupPlacement, error) {
	g, err := state.ServerGroupByID(nil, gid)
	if err != nil || g == nil {
		return nil, err
	}
	members, err := state.GroupMembers(nil, g)
	if err != nil {
		return nil, err
	}
	gp := &scheduler.GroupPlacement{Group: g, Hosts: map[string]int{}}
	for _, m := range members {
		if pending[m.ID] {
			continue
		}
		for _, h := range occupiedHosts(m) {
			gp.Hosts[h]++
		}
	}
	return gp, nil
}

// occupiedHosts are the hosts an instance runs on or is moving to.
func occupiedHosts(inst *structs.Instance) []string {
	if inst == nil {
		return nil
	}
	var out []string
	if inst.HostID != "" {
		out = append(out, inst.HostID)
	}
	if t := inst.Task; t != nil && t.DestHostID != "" && t.DestHostID != inst.HostID {
		out = append(out, t.DestHostID)
	}
	return out
}
