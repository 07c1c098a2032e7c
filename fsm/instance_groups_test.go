package fsm

import (
	"bytes"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func groupSpec(count int, flavor string) *structs.InstanceGroupSpec {
	return &structs.InstanceGroupSpec{Name: "web", Count: count, Flavor: flavor, Image: "cirros"}
}

func groupApply(t *testing.T, f *FSM, index uint64, mt structs.MessageType, body any) {
	t.Helper()
	if resp := apply(t, f, index, mt, body); resp != nil {
		t.Fatalf("apply %s at %d: %v", mt, index, resp)
	}
}

func TestInstanceGroupVersionsAndCheckIndex(t *testing.T) {
	f := testFSM(t)
	sg := &structs.ServerGroup{ID: "sg1", Name: structs.ServerGroupNameFor("web", 1), Policy: structs.PolicyAntiAffinity}
	spec := groupSpec(3, "m1.tiny")
	spec.Placement = &structs.GroupPlacement{Policy: structs.PolicyAntiAffinity}
	groupApply(t, f, 10, structs.InstanceGroupRegisterType, &structs.InstanceGroupRegisterEntry{Spec: spec,
		EnforceIndex: true, CheckIndex: 0, ServerGroupID: "sg1", ServerGroup: sg, SubmitTime: 1})
	s := f.State()
	g, _ := s.InstanceGroupByName(nil, "web")
	if g.Version != 1 || g.CreateIndex != 10 || g.ModifyIndex != 10 || g.ServerGroupID != "sg1" || g.Spec.Update == nil {
		t.Fatalf("group %+v", g)
	}
	if got, _ := s.ServerGroupByID(nil, "sg1"); got == nil || got.CreateIndex != 10 {
		t.Fatalf("the server group was not created with the group: %+v", got)
	}
	if d, _ := s.GroupDeployment(nil, "web"); d.Version != 1 || d.Status != structs.DeploymentRunning || d.Desired != 3 {
		t.Fatalf("deployment %+v", d)
	}

	// A stale check index is refused and changes nothing.
	stale := &structs.InstanceGroupRegisterEntry{Spec: groupSpec(4, "m1.tiny"), EnforceIndex: true, CheckIndex: 9, SubmitTime: 2}
	if resp := apply(t, f, 11, structs.InstanceGroupRegisterType, stale); structs.KindOf(resp.(error)) != structs.KindConflict {
		t.Fatalf("stale check index: %v", resp)
	}
	stale.CheckIndex = 10
	groupApply(t, f, 12, structs.InstanceGroupRegisterType, stale)
	g, _ = s.InstanceGroupByName(nil, "web")
	if g.Version != 2 || g.CreateIndex != 10 || g.ModifyIndex != 12 || g.ServerGroupID != "" {
		t.Fatalf("group after version 2: %+v", g)
	}
	// A new group with a check index other than 0 is refused.
	other := &structs.InstanceGroupRegisterEntry{Spec: &structs.InstanceGroupSpec{Name: "db", Count: 1, Flavor: "f", Image: "i"}, EnforceIndex: true, CheckIndex: 5}
	if resp := apply(t, f, 13, structs.InstanceGroupRegisterType, other); structs.KindOf(resp.(error)) != structs.KindConflict {
		t.Fatalf("new group with check index 5: %v", resp)
	}
	// An invalid spec is refused by the FSM too.
	if resp := apply(t, f, 14, structs.InstanceGroupRegisterType, &structs.InstanceGroupRegisterEntry{Spec: groupSpec(-1, "f")}); structs.KindOf(resp.(error)) != structs.KindInvalid {
		t.Fatalf("invalid spec: %v", resp)
	}

	// The reconciler's progress is recorded for the latest version only,
	// and does not move the check index.
	groupApply(t, f, 15, structs.InstanceGroupDeploymentType, &structs.InstanceGroupDeploymentEntry{Deployment: &structs.GroupDeployment{
		Name: "web", Version: 2, Status: structs.DeploymentSuccessful, Desired: 4, Healthy: 4}})
	if resp := apply(t, f, 16, structs.InstanceGroupDeploymentType, &structs.InstanceGroupDeploymentEntry{Deployment: &structs.GroupDeployment{
		Name: "web", Version: 1, Status: structs.DeploymentRunning}}); structs.KindOf(resp.(error)) != structs.KindConflict {
		t.Fatalf("progress of an old version: %v", resp)
	}
	if d, _ := s.GroupDeployment(nil, "web"); d.Status != structs.DeploymentSuccessful || d.StartedAt != 2 || d.ModifyIndex != 15 {
		t.Fatalf("deployment %+v", d)
	}
	if g, _ := s.InstanceGroupByName(nil, "web"); g.ModifyIndex != 12 {
		t.Fatalf("progress moved the check index to %d", g.ModifyIndex)
	}

	// Stop stores a stopped version; a delete needs a purge.
	groupApply(t, f, 17, structs.InstanceGroupStopType, &structs.InstanceGroupStopEntry{Name: "web", SubmitTime: 3})
	if resp := apply(t, f, 18, structs.InstanceGroupDeleteType, &structs.InstanceGroupDeleteEntry{Name: "web"}); structs.KindOf(resp.(error)) != structs.KindConflict {
		t.Fatalf("delete without purge: %v", resp)
	}
	groupApply(t, f, 19, structs.InstanceGroupStopType, &structs.InstanceGroupStopEntry{Name: "web", Purge: true, SubmitTime: 4})
	vs, _ := s.InstanceGroupVersions(nil, "web")
	if len(vs) != 4 || vs[0].Version != 4 || !vs[0].Purge || !vs[1].Stopped || vs[1].Purge || vs[3].ServerGroupID != "sg1" {
		t.Fatalf("versions %+v", vs)
	}
	// A snapshot keeps it all.
	var buf bytes.Buffer
	if err := s.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	restored, err := ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := restored.InstanceGroupByName(nil, "web"); g == nil || g.Version != 4 || !g.Purge {
		t.Fatalf("restored group %+v", g)
	}
	if vs, _ := restored.InstanceGroupVersions(nil, "web"); len(vs) != 4 {
		t.Fatalf("restored %d versions", len(vs))
	}
	if d, _ := restored.GroupDeployment(nil, "web"); d == nil || d.Status != structs.DeploymentStopping {
		t.Fatalf("restored deployment %+v", d)
	}

	groupApply(t, f, 20, structs.InstanceGroupDeleteType, &structs.InstanceGroupDeleteEntry{Name: "web", ServerGroupIDs: []string{"sg1", "gone"}})
	if g, _ := s.InstanceGroupByName(nil, "web"); g != nil {
		t.Fatalf("group left: %+v", g)
	}
	if vs, _ := s.InstanceGroupVersions(nil, "web"); len(vs) != 0 {
		t.Fatalf("versions left: %d", len(vs))
	}
	if d, _ := s.GroupDeployment(nil, "web"); d != nil {
		t.Fatalf("deployment left: %+v", d)
	}
	if sg, _ := s.ServerGroupByID(nil, "sg1"); sg != nil {
		t.Fatalf("server group left: %+v", sg)
	}
}

func TestInstanceGroupVersionsArePruned(t *testing.T) {
	f := testFSM(t)
	for i := 1; i <= structs.MaxGroupVersions+5; i++ {
		groupApply(t, f, uint64(i), structs.InstanceGroupRegisterType, &structs.InstanceGroupRegisterEntry{Spec: groupSpec(i, "m1.tiny")})
	}
	vs, _ := f.State().InstanceGroupVersions(nil, "web")
	if len(vs) != structs.MaxGroupVersions || vs[0].Version != structs.MaxGroupVersions+5 || vs[len(vs)-1].Version != 6 {
		t.Fatalf("%d versions, %d … %d", len(vs), vs[0].Version, vs[len(vs)-1].Version)
	}
}

func TestInstancesByGroup(t *testing.T) {
	f := testFSM(t)
	s := f.State()
	for i, inst := range []*structs.Instance{
		{ID: "a", Name: "web-1", InstanceGroup: "web"}, {ID: "b", Name: "web-2", InstanceGroup: "web"},
		{ID: "c", Name: "db-1", InstanceGroup: "db"}, {ID: "d", Name: "lonely"},
	} {
		if err := s.UpsertInstance(uint64(i+1), inst); err != nil {
			t.Fatal(err)
		}
	}
	web, _ := s.InstancesByGroup(nil, "web")
	if len(web) != 2 || web[0].ID != "a" || web[1].ID != "b" {
		t.Fatalf("web members %+v", web)
	}
	if none, _ := s.InstancesByGroup(nil, ""); len(none) != 0 {
		t.Fatalf("instances of no group are not indexed: %d", len(none))
	}
}

// populateGroups fills the instance group tables for the snapshot tests.
func populateGroups(t *testing.T, s *StateStore) {
	t.Helper()
	if err := s.RegisterInstanceGroup(6, &structs.InstanceGroupRegisterEntry{Spec: groupSpec(2, "m1.tiny"), SubmitTime: 1}); err != nil {
		t.Fatal(err)
	}
}
