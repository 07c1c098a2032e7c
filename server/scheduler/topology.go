package scheduler

import (
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// Topology is what placement depends on beyond each host's own record:
// availability zones and aggregates, server groups, and where the
// instances named by same_host/different_host hints run. The caller
// works it out from the same snapshot as the hosts (a State that
// implements TopologyState); Schedule only reads it.
type Topology struct {
	// HostZones maps a host id to its availability zone when an
	// aggregate sets it. Other hosts are in the zone their agent
	// configures (Host.AZ), else in DefaultZone.
	HostZones map[string]string
	// DefaultZone is the zone of hosts with neither; "" leaves them in
	// none.
	DefaultZone string
	// HostAggregates maps a host id to the aggregates that contain it.
	HostAggregates map[string][]*structs.Aggregate
	// Groups maps a server group id to the group and where its members
	// run.
	Groups map[string]*GroupPlacement
	// InstanceHosts maps an instance id to the hosts it occupies (two
	// during a move); an instance not listed runs nowhere.
	InstanceHosts map[string][]string
}

// GroupPlacement is a server group and how many of its members each host
// runs, not counting the instances being scheduled.
type GroupPlacement struct {
	Group *structs.ServerGroup
	Hosts map[string]int
}

// TopologyState is a State that also knows the topology the given
// instances are placed in. Without it Schedule places as if there were
// no aggregates, groups or hinted instances.
type TopologyState interface {
	State
	Topology(instances []*structs.Instance) (*Topology, error)
}

// placement is the topology as one Schedule call works with it: host
// metadata merged once, and the members it placed so far.
type placement struct {
	topo *Topology
	// hostMeta is each host's aggregate metadata, values split on ','
	// as Nova's aggregate_metadata_get_by_host does.
	hostMeta map[string]map[string][]string
	// tenantIsolation is set when some aggregate has filter_tenant_id*.
	tenantIsolation bool
	// placed counts, per group and host, the members this plan placed.
	placed map[string]map[string]int
}

func newPlacement(topo *Topology) *placement {
	if topo == nil {
		return nil
	}
	p := &placement{topo: topo, hostMeta: map[string]map[string][]string{}, placed: map[string]map[string]int{}}
	for hostID, aggs := range topo.HostAggregates {
		meta := map[string][]string{}
		for _, a := range aggs {
			for k, v := range a.Metadata {
				if strings.HasPrefix(k, tenantKeyPrefix) {
					p.tenantIsolation = true
				}
				for _, part := range strings.Split(v, ",") {
					meta[k] = append(meta[k], strings.TrimSpace(part))
				}
			}
		}
		p.hostMeta[hostID] = meta
	}
	return p
}

// requestPlacement is what one request's filters and weighers need from
// the topology, worked out once per instance.
type requestPlacement struct {
	run *placement
	// group is the instance's server group, nil when it has none (or
	// the group is gone).
	group *GroupPlacement
	// sameHosts and differentHosts are the hosts of the instances the
	// hints name.
	sameHosts, differentHosts map[string]bool
	// aggSpecs are the flavor's extra specs aggregates must match.
	aggSpecs []aggregateSpec
}

// bind attaches the run's topology to req; it is a no-op without one.
func (p *placement) bind(req *Request) {
	if p == nil {
		return
	}
	rp := &requestPlacement{run: p}
	inst := req.Instance
	if inst.ServerGroupID != "" {
		rp.group = p.topo.Groups[inst.ServerGroupID]
	}
	if h := inst.Hints; h != nil {
		if len(h.SameHost) > 0 {
			rp.sameHosts = p.hostsOf(h.SameHost)
		}
		if len(h.DifferentHost) > 0 {
			rp.differentHosts = p.hostsOf(h.DifferentHost)
		}
	}
	if inst.Flavor != nil {
		rp.aggSpecs = aggregateSpecs(inst.Flavor.ExtraSpecs)
	}
	req.place = rp
}

func (p *placement) hostsOf(ids []string) map[string]bool {
	out := map[string]bool{}
	for _, id := range ids {
		for _, h := range p.topo.InstanceHosts[id] {
			out[h] = true
		}
	}
	return out
}

// record counts a placement of req on hostID for the requests after it.
func (p *placement) record(req *Request, hostID string) {
	if p == nil || req.place == nil || req.place.group == nil {
		return
	}
	id := req.place.group.Group.ID
	if p.placed[id] == nil {
		p.placed[id] = map[string]int{}
	}
	p.placed[id][hostID]++
}

// groupCount is how many members of the request's group a host runs,
// counting this plan's placements.
func (rp *requestPlacement) groupCount(hostID string) int {
	g := rp.group
	return g.Hosts[hostID] + rp.run.placed[g.Group.ID][hostID]
}

// groupHosted reports whether any member of the request's group runs
// anywhere, counting this plan's placements.
func (rp *requestPlacement) groupHosted() bool {
	for _, n := range rp.group.Hosts {
		if n > 0 {
			return true
		}
	}
	for _, n := range rp.run.placed[rp.group.Group.ID] {
		if n > 0 {
			return true
		}
	}
	return false
}

// groupPolicy is the request's group policy, "" without a group.
func (req *Request) groupPolicy() string {
	if req.place == nil || req.place.group == nil || req.place.group.Group == nil {
		return ""
	}
	return req.place.group.Group.Policy
}

// hostZone is a host's availability zone as the request sees it: an
// aggregate's, else the agent's, else the topology's default zone.
func (req *Request) hostZone(h *HostView) string {
	if req.place != nil {
		topo := req.place.run.topo
		if z, ok := topo.HostZones[h.Host.ID]; ok {
			return z
		}
		if h.Host.AZ == "" {
			return topo.DefaultZone
		}
	}
	return h.Host.AZ
}

// hostMeta is a host's merged aggregate metadata, nil without any.
func (req *Request) hostMeta(hostID string) map[string][]string {
	if req.place == nil {
		return nil
	}
	return req.place.run.hostMeta[hostID]
}
