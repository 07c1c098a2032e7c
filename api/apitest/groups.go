package apitest

import (
	"net/http"
	"sort"
	"strconv"

	"github.com/stratus-cloud/stratus/api"
)

// groupState is the fake's instance groups. It converges nothing: tests
// set what a group looks like with SetGroup, and what a plan answers
// with SetPlan. A register stores a new version (unless the spec is the
// latest one) whose deployment is successful at once, with no members.
type groupState struct {
	groups        map[string]*api.InstanceGroupStatus
	groupVersions map[string][]*api.InstanceGroupVersion
	plans         map[string]*api.GroupPlan
	// failDeployments, when set, is the description of every deployment
	// stored from now on, which then fails.
	failDeployments string
}

func (s *Server) initGroups(handle func(string, func(http.ResponseWriter, *http.Request) (any, error))) {
	s.groups = map[string]*api.InstanceGroupStatus{}
	s.groupVersions = map[string][]*api.InstanceGroupVersion{}
	s.plans = map[string]*api.GroupPlan{}
	handle("GET /v1/groups", s.groupList)
	handle("POST /v1/groups", s.groupRegister)
	handle("GET /v1/groups/{name}", s.groupInfo)
	handle("GET /v1/groups/{name}/versions", s.groupVersionList)
	handle("POST /v1/groups/{name}/plan", s.groupPlan)
	handle("POST /v1/groups/{name}/stop", s.groupStop)
	handle("POST /v1/groups/{name}/revert", s.groupRevert)
}

// SetGroup stores a copy of g as the group's state.
func (s *Server) SetGroup(g *api.InstanceGroupStatus) {
	s.locked(func() {
		s.bump()
		s.groups[g.Group.Name] = clone(g)
	})
}

// Group returns a copy of a group's state, or nil.
func (s *Server) Group(name string) *api.InstanceGroupStatus {
	var out *api.InstanceGroupStatus
	s.locked(func() { out = clone(s.groups[name]) })
	return out
}

// RemoveGroup forgets a group, as a purge does.
func (s *Server) RemoveGroup(name string) {
	s.locked(func() {
		s.bump()
		delete(s.groups, name)
	})
}

// SetGroupVersions sets a group's versions, newest first.
func (s *Server) SetGroupVersions(name string, versions []*api.InstanceGroupVersion) {
	s.locked(func() {
		s.groupVersions[name] = nil
		for _, v := range versions {
			s.groupVersions[name] = append(s.groupVersions[name], clone(v))
		}
	})
}

// FailDeployments makes the deployments of the versions stored from
// now on fail with the description desc ("" makes them succeed again).
func (s *Server) FailDeployments(desc string) { s.locked(func() { s.failDeployments = desc }) }

// SetPlan sets what planning the group p.Name answers.
func (s *Server) SetPlan(p *api.GroupPlan) { s.locked(func() { s.plans[p.Name] = clone(p) }) }

func (s *Server) groupList(http.ResponseWriter, *http.Request) (any, error) {
	out := []*api.InstanceGroupSummary{}
	for _, g := range s.groups {
		sum := &api.InstanceGroupSummary{Name: g.Group.Name, Version: g.Group.Version, Stopped: g.Group.Stopped,
			Purge: g.Group.Purge, Deployment: clone(g.Deployment), SubmitTime: g.Group.SubmitTime,
			CreateIndex: g.Group.CreateIndex, ModifyIndex: g.Group.ModifyIndex}
		if g.Group.Spec != nil {
			sum.Desired = g.Group.Spec.Count
		}
		out = append(out, sum)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *Server) groupInfo(_ http.ResponseWriter, r *http.Request) (any, error) {
	g := s.groups[r.PathValue("name")]
	if g == nil {
		return nil, notFound("instance group", r.PathValue("name"))
	}
	return g, nil
}

func (s *Server) groupVersionList(_ http.ResponseWriter, r *http.Request) (any, error) {
	v, ok := s.groupVersions[r.PathValue("name")]
	if !ok {
		return nil, notFound("instance group", r.PathValue("name"))
	}
	return v, nil
}

type groupBody struct {
	Spec         *api.InstanceGroupSpec
	EnforceIndex bool
	CheckIndex   uint64
}

func (s *Server) groupPlan(_ http.ResponseWriter, r *http.Request) (any, error) {
	var body groupBody
	if err := s.decodeBody(&body); err != nil {
		return nil, err
	}
	if body.Spec == nil || body.Spec.Name != r.PathValue("name") {
		return nil, apiErr(api.KindInvalid, "the spec is not for this group")
	}
	if p := s.plans[body.Spec.Name]; p != nil {
		return p, nil
	}
	p := &api.GroupPlan{Name: body.Spec.Name, SpecChanged: true}
	for n := 1; n <= body.Spec.Count; n++ {
		p.Instances = append(p.Instances, &api.InstanceDiff{Name: body.Spec.Name + "-" + strconv.Itoa(n), Action: api.PlanCreate})
		p.Summary.Create++
	}
	return p, nil
}

func (s *Server) checkGroupIndex(name string, enforce bool, check uint64) error {
	if !enforce {
		return nil
	}
	var cur uint64
	if g := s.groups[name]; g != nil {
		cur = g.Group.ModifyIndex
	}
	if cur != check {
		return apiErr(api.KindConflict, "instance group \""+name+"\" changed: its modify index is not the check index; plan again")
	}
	return nil
}

// storeGroupVersion stores a new version of a group and answers it.
func (s *Server) storeGroupVersion(name string, spec *api.InstanceGroupSpec, stopped, purge bool, revertedFrom uint64) *api.GroupWriteResponse {
	g := s.groups[name]
	if g == nil {
		g = &api.InstanceGroupStatus{Group: &api.InstanceGroup{Name: name, CreateIndex: s.index + 1}}
		s.groups[name] = g
	}
	g.Group.Version++
	g.Group.Spec, g.Group.Stopped, g.Group.Purge = clone(spec), stopped, purge
	g.Group.ModifyIndex = s.bump()
	status, desc := api.DeploymentSuccessful, "every member healthy"
	if s.failDeployments != "" {
		status, desc = api.DeploymentFailed, s.failDeployments
	}
	if stopped {
		status, desc = api.DeploymentStopped, "every member deleted"
		g.Members = nil
	}
	g.Deployment = &api.GroupDeployment{Name: name, Version: g.Group.Version, Status: status, Description: desc,
		Desired: spec.Count, CreateIndex: s.index, ModifyIndex: s.index}
	s.groupVersions[name] = append([]*api.InstanceGroupVersion{{Name: name, Version: g.Group.Version, Spec: clone(spec),
		Stopped: stopped, Purge: purge, RevertedFrom: revertedFrom, CreateIndex: s.index}}, s.groupVersions[name]...)
	if stopped && purge {
		delete(s.groups, name)
	}
	return &api.GroupWriteResponse{Name: name, Version: g.Group.Version, Changed: true, GroupModifyIndex: g.Group.ModifyIndex}
}

func (s *Server) groupRegister(http.ResponseWriter, *http.Request) (any, error) {
	var body groupBody
	if err := s.decodeBody(&body); err != nil {
		return nil, err
	}
	if body.Spec == nil || body.Spec.Name == "" {
		return nil, apiErr(api.KindInvalid, "the body needs a Spec with a Name")
	}
	if err := s.checkGroupIndex(body.Spec.Name, body.EnforceIndex, body.CheckIndex); err != nil {
		return nil, err
	}
	return s.storeGroupVersion(body.Spec.Name, body.Spec, false, false, 0), nil
}

func (s *Server) groupStop(_ http.ResponseWriter, r *http.Request) (any, error) {
	var body struct {
		Purge        bool
		EnforceIndex bool
		CheckIndex   uint64
	}
	if err := s.decodeBody(&body); err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	g := s.groups[name]
	if g == nil {
		return nil, notFound("instance group", name)
	}
	if err := s.checkGroupIndex(name, body.EnforceIndex, body.CheckIndex); err != nil {
		return nil, err
	}
	return s.storeGroupVersion(name, g.Group.Spec, true, body.Purge, 0), nil
}

func (s *Server) groupRevert(_ http.ResponseWriter, r *http.Request) (any, error) {
	var body struct {
		Version      uint64
		EnforceIndex bool
		CheckIndex   uint64
	}
	if err := s.decodeBody(&body); err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	if s.groups[name] == nil {
		return nil, notFound("instance group", name)
	}
	if err := s.checkGroupIndex(name, body.EnforceIndex, body.CheckIndex); err != nil {
		return nil, err
	}
	for _, v := range s.groupVersions[name] {
		if v.Version == body.Version {
			return s.storeGroupVersion(name, v.Spec, false, false, v.Version), nil
		}
	}
	return nil, apiErr(api.KindNotFound, "no such version")
}
