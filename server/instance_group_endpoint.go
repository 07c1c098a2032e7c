package server

import (
	"sort"
	"time"

	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// InstanceGroup is the endpoint of instance groups (HCL instance specs):
// it stores their versions; the leader's group reconciler converges the
// members to the latest one.
type InstanceGroup struct{ srv *Server }

// canonicalSpec copies, canonicalizes and validates a submitted spec.
func canonicalSpec(in *structs.InstanceGroupSpec) (*structs.InstanceGroupSpec, error) {
	if in == nil {
		return nil, structs.Errorf(structs.KindInvalid, "no instance group spec")
	}
	spec := in.Copy()
	spec.Canonicalize()
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return spec, nil
}

// Register stores a spec as the group's next version, unless it is the
// latest version already (and the group is not stopped). With
// EnforceIndex it is refused unless the group's ModifyIndex is
// CheckIndex.
func (e *InstanceGroup) Register(args *structs.InstanceGroupRegisterRequest, reply *structs.InstanceGroupRegisterResponse) error {
	if done, err := e.srv.forward("InstanceGroup.Register", args, args, reply); done {
		return err
	}
	spec, err := canonicalSpec(args.Spec)
	if err != nil {
		return err
	}
	if _, err := resolveGroupTarget(e.srv.fsm.State(), spec); err != nil {
		return err
	}
	return e.srv.registerGroup(spec, args.EnforceIndex, args.CheckIndex, 0, reply)
}

// registerGroup stores spec (canonical, valid) as a new version,
// choosing the server group its placement uses.
func (s *Server) registerGroup(spec *structs.InstanceGroupSpec, enforce bool, check, revertedFrom uint64, reply *structs.InstanceGroupRegisterResponse) error {
	state := s.fsm.State()
	g, err := state.InstanceGroupByName(nil, spec.Name)
	if err != nil {
		return err
	}
	if enforce {
		var cur uint64
		if g != nil {
			cur = g.ModifyIndex
		}
		if cur != check {
			return structs.Errorf(structs.KindConflict, "instance group %q changed: its modify index is %d, not the check index %d; plan again", spec.Name, cur, check)
		}
	}
	reply.Name = spec.Name
	if g != nil && !g.Stopped && g.Spec.Equal(spec) {
		reply.Version, reply.Changed, reply.GroupModifyIndex, reply.Index = g.Version, false, g.ModifyIndex, g.ModifyIndex
		return nil
	}
	sgID, err := placementServerGroup(state, g, spec)
	if err != nil {
		return err
	}
	now := time.Now().UnixNano()
	entry := &structs.InstanceGroupRegisterEntry{Spec: spec, EnforceIndex: enforce, CheckIndex: check,
		RevertedFrom: revertedFrom, SubmitTime: now, ServerGroupID: sgID}
	if sgID == newServerGroup {
		version := uint64(1)
		if g != nil {
			version = g.Version + 1
		}
		entry.ServerGroup = &structs.ServerGroup{ID: uuid.NewString(), Name: structs.ServerGroupNameFor(spec.Name, version),
			Policy: spec.Placement.Policy, MaxServerPerHost: spec.Placement.MaxPerHost, CreatedAt: now}
		entry.ServerGroupID = entry.ServerGroup.ID
	}
	index, err := s.apply(structs.InstanceGroupRegisterType, entry)
	if err != nil {
		return err
	}
	return s.groupReply(spec.Name, index, reply)
}

func (s *Server) groupReply(name string, index uint64, reply *structs.InstanceGroupRegisterResponse) error {
	g, err := s.fsm.State().InstanceGroupByName(nil, name)
	if err != nil {
		return err
	}
	if g == nil {
		return fsm.GroupNotFound(name)
	}
	reply.Name, reply.Version, reply.Changed, reply.GroupModifyIndex, reply.Index = name, g.Version, true, g.ModifyIndex, index
	return nil
}

// Plan computes what registering a spec would do, member by member,
// without changing anything.
func (e *InstanceGroup) Plan(args *structs.InstanceGroupPlanRequest, reply *structs.InstanceGroupPlanResponse) error {
	if done, err := e.srv.forward("InstanceGroup.Plan", args, args, reply); done {
		return err
	}
	spec, err := canonicalSpec(args.Spec)
	if err != nil {
		return err
	}
	state := e.srv.fsm.State()
	plan, err := planGroup(state, spec)
	if err != nil {
		return err
	}
	reply.Plan = plan
	reply.Index = max(state.Index(fsm.TableInstanceGroups), state.Index(fsm.TableInstances), 1)
	e.srv.setQueryMeta(&reply.QueryMeta)
	return nil
}

// groupIndex is the index a group read reflects.
func groupIndex(state *fsm.StateStore) uint64 {
	return max(state.Index(fsm.TableInstanceGroups), state.Index(fsm.TableGroupDeployments))
}

// List reads every group with its deployment.
func (e *InstanceGroup) List(args *structs.InstanceGroupListRequest, reply *structs.InstanceGroupListResponse) error {
	if done, err := e.srv.forward("InstanceGroup.List", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		groups, err := state.InstanceGroups(ws)
		if err != nil {
			return nil, 0, err
		}
		out := make([]*structs.InstanceGroupSummary, 0, len(groups))
		for _, g := range groups {
			d, err := state.GroupDeployment(ws, g.Name)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, &structs.InstanceGroupSummary{Name: g.Name, Version: g.Version, Stopped: g.Stopped, Purge: g.Purge,
				Desired: g.Spec.Count, Deployment: d, SubmitTime: g.SubmitTime, CreateIndex: g.CreateIndex, ModifyIndex: g.ModifyIndex})
		}
		reply.Groups = out
		return out, groupIndex(state), nil
	})
}

// Get reads one group with its deployment and members.
func (e *InstanceGroup) Get(args *structs.InstanceGroupSpecificRequest, reply *structs.InstanceGroupResponse) error {
	if done, err := e.srv.forward("InstanceGroup.Get", args, args, reply); done {
		return err
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		g, err := state.InstanceGroupByName(ws, args.Name)
		if err != nil {
			return nil, 0, err
		}
		reply.Group, reply.Deployment, reply.Members = g, nil, nil
		if g != nil {
			if reply.Deployment, err = state.GroupDeployment(ws, g.Name); err != nil {
				return nil, 0, err
			}
			if reply.Members, err = state.InstancesByGroup(ws, g.Name); err != nil {
				return nil, 0, err
			}
			sortMembers(g.Name, reply.Members)
		}
		return g, max(groupIndex(state), state.Index(fsm.TableInstances)), nil
	})
	if err == nil && reply.Group == nil {
		return fsm.GroupNotFound(args.Name)
	}
	return err
}

// sortMembers orders members by slot, then creation.
func sortMembers(group string, list []*structs.Instance) {
	sort.SliceStable(list, func(i, j int) bool {
		si, sj := memberSlot(group, list[i].Name), memberSlot(group, list[j].Name)
		if si != sj {
			return si < sj
		}
		return list[i].CreateIndex < list[j].CreateIndex
	})
}

// Versions reads a group's stored versions, newest first.
func (e *InstanceGroup) Versions(args *structs.InstanceGroupSpecificRequest, reply *structs.InstanceGroupVersionsResponse) error {
	if done, err := e.srv.forward("InstanceGroup.Versions", args, args, reply); done {
		return err
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		versions, err := state.InstanceGroupVersions(ws, args.Name)
		reply.Versions, reply.Diffs = versions, map[uint64][]*structs.FieldDiff{}
		for i := 0; i+1 < len(versions); i++ {
			reply.Diffs[versions[i].Version] = versionFields(versions[i+1], versions[i])
		}
		return versions, state.Index(fsm.TableInstanceGroupVersions), err
	})
	if err == nil && len(reply.Versions) == 0 {
		return fsm.GroupNotFound(args.Name)
	}
	return err
}

// Stop stores a stopped version of a group: the reconciler deletes its
// members, and with Purge the group once they are gone.
func (e *InstanceGroup) Stop(args *structs.InstanceGroupStopRequest, reply *structs.InstanceGroupRegisterResponse) error {
	if done, err := e.srv.forward("InstanceGroup.Stop", args, args, reply); done {
		return err
	}
	g, err := e.srv.fsm.State().InstanceGroupByName(nil, args.Name)
	if err != nil {
		return err
	}
	if g == nil {
		return fsm.GroupNotFound(args.Name)
	}
	if args.EnforceIndex && g.ModifyIndex != args.CheckIndex {
		return structs.Errorf(structs.KindConflict, "instance group %q changed: its modify index is %d, not the check index %d", g.Name, g.ModifyIndex, args.CheckIndex)
	}
	if g.Stopped && (g.Purge || !args.Purge) {
		reply.Name, reply.Version, reply.GroupModifyIndex, reply.Index = g.Name, g.Version, g.ModifyIndex, g.ModifyIndex
		return nil
	}
	index, err := e.srv.apply(structs.InstanceGroupStopType, &structs.InstanceGroupStopEntry{Name: g.Name, Purge: args.Purge,
		EnforceIndex: args.EnforceIndex, CheckIndex: args.CheckIndex, SubmitTime: time.Now().UnixNano()})
	if err != nil {
		return err
	}
	return e.srv.groupReply(g.Name, index, reply)
}

// Revert stores an earlier version's spec as the group's next version.
func (e *InstanceGroup) Revert(args *structs.InstanceGroupRevertRequest, reply *structs.InstanceGroupRegisterResponse) error {
	if done, err := e.srv.forward("InstanceGroup.Revert", args, args, reply); done {
		return err
	}
	state := e.srv.fsm.State()
	g, err := state.InstanceGroupByName(nil, args.Name)
	if err != nil {
		return err
	}
	if g == nil {
		return fsm.GroupNotFound(args.Name)
	}
	v, err := state.InstanceGroupVersion(nil, args.Name, args.Version)
	if err != nil {
		return err
	}
	if v == nil {
		return structs.Errorf(structs.KindNotFound, "instance group %q has no version %d", args.Name, args.Version)
	}
	if v.Stopped {
		return structs.Errorf(structs.KindInvalid, "version %d of instance group %q stopped it; revert to a version that ran, or stop the group", v.Version, v.Name)
	}
	spec, err := canonicalSpec(v.Spec)
	if err != nil {
		return err
	}
	if _, err := resolveGroupTarget(state, spec); err != nil {
		return err
	}
	return e.srv.registerGroup(spec, args.EnforceIndex, args.CheckIndex, v.Version, reply)
}

// versionFields is what changed from one version to the next, stopping
// and starting included.
func versionFields(prev, cur *structs.InstanceGroupVersion) []*structs.FieldDiff {
	out := specFields(prev.Spec, cur.Spec)
	state := func(v *structs.InstanceGroupVersion) string {
		switch {
		case v.Purge:
			return "stopped (purge)"
		case v.Stopped:
			return "stopped"
		}
		return "running"
	}
	if a, b := state(prev), state(cur); a != b {
		out = append([]*structs.FieldDiff{{Name: "state", Type: structs.DiffEdited, Old: a, New: b}}, out...)
	}
	return out
}
