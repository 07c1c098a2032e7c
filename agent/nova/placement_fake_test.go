package nova

import (
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

// fakeExt is the fake servers' server groups, aggregates and quotas,
// with the same error kinds and messages as the real endpoints (whose
// rules the fsm and server packages test).
type fakeExt struct {
	groups map[string]*structs.ServerGroup
	aggs   map[int64]*structs.Aggregate
	// quotas are limits by "project/<id>" and "class/<name>".
	quotas map[string]map[string]int64
}

// extRPC answers the methods fakeExt owns, and checks quotas and records
// hints and group membership on Instance.Create; handled is false for
// the methods the base fake answers.
func (f *fakeRPC) extRPC(method string, args, reply any) (handled bool, err error) {
	if f.ext == nil {
		f.ext = &fakeExt{groups: map[string]*structs.ServerGroup{}, aggs: map[int64]*structs.Aggregate{},
			quotas: map[string]map[string]int64{}}
	}
	x := f.ext
	switch method {
	case "Instance.Create":
		return true, f.extCreate(args.(*structs.InstanceCreateRequest), reply.(*structs.InstanceCreateResponse))
	case "Host.Get":
		// By id or name, as the real endpoint.
		id := args.(*structs.HostSpecificRequest).HostID
		h := f.hostByIDOrName(id)
		if h == nil {
			return true, notFoundErr("host", id)
		}
		reply.(*structs.SingleHostResponse).Host = h.Copy()
	case "ServerGroup.Create":
		g := args.(*structs.ServerGroupCreateRequest).Group.Copy()
		if err := g.Validate(); err != nil {
			return true, err
		}
		used := 0
		for _, other := range x.groups {
			if other.ProjectID == g.ProjectID {
				used++
			}
		}
		if limit := x.limit(g.ProjectID, structs.QuotaServerGroups); limit >= 0 && int64(used+1) > limit {
			return true, structs.Errorf(structs.KindQuotaReached, "Quota exceeded, too many server groups.")
		}
		g.ID, g.CreatedAt, g.CreateIndex, g.ModifyIndex = uuid.NewString(), time.Now().UnixNano(), f.index, f.index
		x.groups[g.ID] = g
		reply.(*structs.SingleServerGroupResponse).Group = f.liveGroup(g)
	case "ServerGroup.Get":
		id := args.(*structs.ServerGroupSpecificRequest).GroupID
		g := x.groups[id]
		if g == nil {
			return true, structs.Errorf(structs.KindNotFound, "Instance group %s could not be found.", id)
		}
		reply.(*structs.SingleServerGroupResponse).Group = f.liveGroup(g)
	case "ServerGroup.List":
		project := args.(*structs.ServerGroupListRequest).ProjectID
		out := reply.(*structs.ServerGroupListResponse)
		for _, g := range x.groups {
			if project == "" || g.ProjectID == project {
				out.Groups = append(out.Groups, f.liveGroup(g))
			}
		}
		sort.Slice(out.Groups, func(i, j int) bool { return out.Groups[i].CreateIndex < out.Groups[j].CreateIndex })
	case "ServerGroup.Delete":
		id := args.(*structs.ServerGroupDeleteRequest).GroupID
		if x.groups[id] == nil {
			return true, structs.Errorf(structs.KindNotFound, "Instance group %s could not be found.", id)
		}
		delete(x.groups, id)
	case "Aggregate.List":
		out := reply.(*structs.AggregateListResponse)
		for _, a := range x.aggs {
			out.Aggregates = append(out.Aggregates, a.Copy())
		}
		sort.Slice(out.Aggregates, func(i, j int) bool { return out.Aggregates[i].ID < out.Aggregates[j].ID })
	case "Aggregate.Get":
		a, err := x.agg(args.(*structs.AggregateSpecificRequest).AggregateID)
		if err != nil {
			return true, err
		}
		reply.(*structs.SingleAggregateResponse).Aggregate = a.Copy()
	case "Aggregate.Create":
		req := args.(*structs.AggregateCreateRequest)
		if err := x.uniqueName(req.Name, 0); err != nil {
			return true, err
		}
		a := &structs.Aggregate{ID: int64(f.index), UUID: uuid.NewString(), Name: req.Name, Metadata: map[string]string{},
			CreatedAt: time.Now().UnixNano(), CreateIndex: f.index, ModifyIndex: f.index}
		if req.AZ != "" {
			a.Metadata[structs.AggregateAZKey] = req.AZ
		}
		x.aggs[a.ID] = a
		reply.(*structs.SingleAggregateResponse).Aggregate = a.Copy()
	case "Aggregate.Update":
		req := args.(*structs.AggregateUpdateRequest)
		a, err := x.agg(req.AggregateID)
		if err != nil {
			return true, err
		}
		if req.Name != nil {
			if err := x.uniqueName(*req.Name, a.ID); err != nil {
				return true, err
			}
			a.Name = *req.Name
		}
		if req.AZ != nil {
			if *req.AZ == "" {
				return true, structs.Errorf(structs.KindInvalid, "Cannot update aggregate %d. Reason: Aggregate %s does not support empty named availability zone.", a.ID, a.Name)
			}
			a.Metadata[structs.AggregateAZKey] = *req.AZ
		}
		a.UpdatedAt = time.Now().UnixNano()
		reply.(*structs.SingleAggregateResponse).Aggregate = a.Copy()
	case "Aggregate.Delete":
		a, err := x.agg(args.(*structs.AggregateDeleteRequest).AggregateID)
		if err != nil {
			return true, err
		}
		if len(a.Hosts) > 0 {
			return true, structs.Errorf(structs.KindInvalid, "Cannot remove host from aggregate %d. Reason: Host aggregate is not empty.", a.ID)
		}
		delete(x.aggs, a.ID)
	case "Aggregate.AddHost", "Aggregate.RemoveHost":
		req := args.(*structs.AggregateHostRequest)
		a, err := x.agg(req.AggregateID)
		if err != nil {
			return true, err
		}
		h := f.hostByIDOrName(req.Host)
		if h == nil {
			return true, structs.Errorf(structs.KindNotFound, "Compute host %s could not be found.", req.Host)
		}
		if method == "Aggregate.RemoveHost" {
			if !a.HasHost(h.ID) {
				return true, structs.Errorf(structs.KindNotFound, "Host %s is not in aggregate %d", h.ID, a.ID)
			}
			hosts := a.Hosts[:0]
			for _, id := range a.Hosts {
				if id != h.ID {
					hosts = append(hosts, id)
				}
			}
			a.Hosts = hosts
		} else {
			if a.HasHost(h.ID) {
				return true, structs.Errorf(structs.KindConflict, "The aggregate %d already has host %s.", a.ID, h.Name)
			}
			for _, other := range x.aggs {
				if z := other.AZ(); z != "" && a.AZ() != "" && z != a.AZ() && other.HasHost(h.ID) {
					return true, structs.Errorf(structs.KindConflict, "Cannot add host to aggregate %d. Reason: One or more hosts already in availability zone(s) ['%s'].", a.ID, z)
				}
			}
			a.Hosts = append(a.Hosts, h.ID)
		}
		reply.(*structs.SingleAggregateResponse).Aggregate = a.Copy()
	case "Aggregate.SetMetadata":
		req := args.(*structs.AggregateMetadataRequest)
		a, err := x.agg(req.AggregateID)
		if err != nil {
			return true, err
		}
		for k, v := range req.Set {
			a.Metadata[k] = v
		}
		for _, k := range req.Delete {
			if k == structs.AggregateAZKey {
				return true, structs.Errorf(structs.KindInvalid, "Cannot update metadata of aggregate %d. Reason: Aggregate %s does not support empty named availability zone.", a.ID, a.Name)
			}
			delete(a.Metadata, k)
		}
		a.UpdatedAt = time.Now().UnixNano()
		reply.(*structs.SingleAggregateResponse).Aggregate = a.Copy()
	case "Quota.Get":
		req := args.(*structs.QuotaGetRequest)
		out := reply.(*structs.QuotaResponse)
		out.Limits = x.limits(req.ProjectID)
		if req.Usage {
			out.Usage = f.usage(req.ProjectID, req.UserID)
		}
	case "Quota.GetClass":
		out := reply.(*structs.QuotaResponse)
		out.Limits = x.classLimits(args.(*structs.QuotaClassRequest).Class)
	case "Quota.Update":
		req := args.(*structs.QuotaUpdateRequest)
		if req.Scope == structs.QuotaScopeProject && !req.Force {
			used := f.usage(req.ID, "")
			for k, v := range req.Limits {
				if v >= 0 && v < used[k] {
					return true, structs.Errorf(structs.KindInvalid, "Quota limit %d for %s must be greater than or equal to already used and reserved %d.", v, k, used[k])
				}
			}
		}
		key := req.Scope + "/" + req.ID
		if x.quotas[key] == nil {
			x.quotas[key] = map[string]int64{}
		}
		for k, v := range req.Limits {
			x.quotas[key][k] = v
		}
		out := reply.(*structs.QuotaResponse)
		if req.Scope == structs.QuotaScopeClass {
			out.Limits = x.classLimits(req.ID)
		} else {
			out.Limits = x.limits(req.ID)
		}
	case "Quota.Delete":
		delete(x.quotas, structs.QuotaScopeProject+"/"+args.(*structs.QuotaDeleteRequest).ProjectID)
	default:
		return false, nil
	}
	return true, nil
}

// extCreate checks a create's metadata and instances quota, then creates
// as the base fake does, keeping the hints, target host and group.
func (f *fakeRPC) extCreate(req *structs.InstanceCreateRequest, out *structs.InstanceCreateResponse) error {
	x := f.ext
	if limit := x.limit(req.ProjectID, structs.QuotaMetadataItems); int64(len(req.Metadata)) > limit {
		return structs.Errorf(structs.KindQuotaReached, "Maximum number of metadata items exceeds %d", limit)
	}
	count := int64(max(req.Count, 1))
	used := f.usage(req.ProjectID, "")[structs.QuotaInstances]
	if limit := x.limit(req.ProjectID, structs.QuotaInstances); limit >= 0 && used+count > limit {
		return structs.Errorf(structs.KindQuotaReached, "Quota exceeded for instances: Requested %d, but already used %d of %d instances", count, used, limit)
	}
	var g *structs.ServerGroup
	if req.Hints != nil && req.Hints.Group != "" {
		if g = x.groups[req.Hints.Group]; g == nil {
			return structs.Errorf(structs.KindInvalid, "Instance group %s could not be found.", req.Hints.Group)
		}
	}
	if err := f.createInstances(req, out); err != nil {
		return err
	}
	for i, inst := range out.Instances {
		stored := f.instances[inst.ID]
		stored.Hints, stored.TargetHostID = req.Hints.Copy(), req.TargetHost
		if g != nil {
			stored.ServerGroupID = g.ID
			g.Members = append(g.Members, inst.ID)
		}
		out.Instances[i] = stored.Copy()
	}
	return nil
}

// liveGroup is a copy of g without members that are gone.
func (f *fakeRPC) liveGroup(g *structs.ServerGroup) *structs.ServerGroup {
	c := g.Copy()
	c.Members = c.Members[:0]
	for _, id := range g.Members {
		if f.instances[id] != nil {
			c.Members = append(c.Members, id)
		}
	}
	return c
}

func (f *fakeRPC) hostByIDOrName(key string) *structs.Host {
	if h := f.hosts[key]; h != nil {
		return h
	}
	for _, h := range f.hosts {
		if h.Name == key {
			return h
		}
	}
	return nil
}

// usage counts a project's instances, cores, ram and server groups, and
// a user's key pairs.
func (f *fakeRPC) usage(project, user string) map[string]int64 {
	used := map[string]int64{}
	for _, inst := range f.instances {
		if inst.ProjectID != project {
			continue
		}
		used[structs.QuotaInstances]++
		if inst.Flavor != nil {
			used[structs.QuotaCores] += int64(inst.Flavor.VCPUs)
			used[structs.QuotaRAM] += int64(inst.Flavor.MemoryMB)
		}
	}
	for _, g := range f.ext.groups {
		if g.ProjectID == project {
			used[structs.QuotaServerGroups]++
		}
	}
	for key := range f.keypairs {
		if user != "" && strings.HasPrefix(key, user+"/") {
			used[structs.QuotaKeyPairs]++
		}
	}
	return used
}

func (x *fakeExt) agg(id int64) (*structs.Aggregate, error) {
	if a := x.aggs[id]; a != nil {
		return a, nil
	}
	return nil, structs.Errorf(structs.KindNotFound, "Aggregate %d could not be found.", id)
}

func (x *fakeExt) uniqueName(name string, self int64) error {
	for _, a := range x.aggs {
		if a.Name == name && a.ID != self {
			return structs.Errorf(structs.KindConflict, "Aggregate %s already exists.", name)
		}
	}
	return nil
}

func (x *fakeExt) limit(project, resource string) int64 {
	if v, ok := x.quotas[structs.QuotaScopeProject+"/"+project][resource]; ok {
		return v
	}
	return x.classLimits(structs.QuotaDefaultClass)[resource]
}

func (x *fakeExt) limits(project string) map[string]int64 {
	out := map[string]int64{}
	for k := range structs.DefaultQuotas {
		out[k] = x.limit(project, k)
	}
	return out
}

func (x *fakeExt) classLimits(class string) map[string]int64 {
	out := map[string]int64{}
	for k, v := range structs.DefaultQuotas {
		out[k] = v
		if c, ok := x.quotas[structs.QuotaScopeClass+"/"+structs.QuotaDefaultClass][k]; ok {
			out[k] = c
		}
		if c, ok := x.quotas[structs.QuotaScopeClass+"/"+class][k]; ok {
			out[k] = c
		}
	}
	return out
}
