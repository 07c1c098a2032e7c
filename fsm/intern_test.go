package fsm

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stratus-cloud/stratus/structs"
)

// TestStoredObjectsShareRepeatedValues: two instances created by
// separate entries (each decoded on its own) and placed by separate
// plans share their project id, state, flavor and resource map, and an
// allocation shares its instance's id; after a restore too.
func TestStoredObjectsShareRepeatedValues(t *testing.T) {
	u := &usageSim{t: t, f: testFSM(t)}
	if resp := u.apply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: bootHost("h1")}); resp != nil {
		t.Fatal(resp)
	}
	f := structs.DevFlavors()[0]
	res, _ := structs.FlavorResources(f)
	for _, id := range []string{"i1", "i2"} {
		inst := bootInstance(id)
		inst.ProjectID, inst.UserID = "p-shared", "u1"
		if resp := u.apply(structs.InstanceCreateType, &structs.InstanceCreateEntry{Flavor: f, Instances: []*structs.Instance{inst},
			Eval: &structs.Evaluation{ID: "e-" + id, InstanceIDs: []string{id}, Status: structs.EvalStatusPending}}); resp != nil {
			t.Fatal(resp)
		}
		if resp := u.apply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a-" + id, InstanceID: id,
			HostID: "h1", EvalID: "e-" + id, Resources: res, DesiredState: structs.AllocDesiredRunning, ClientState: structs.AllocClientPending}}}); resp != nil {
			t.Fatal(resp)
		}
	}
	check := func(s *StateStore, when string) {
		t.Helper()
		i1, _ := s.InstanceByID(nil, "i1")
		i2, _ := s.InstanceByID(nil, "i2")
		a1, _ := s.AllocationByID(nil, "a-i1")
		a2, _ := s.AllocationByID(nil, "a-i2")
		same := func(what, x, y string) {
			t.Helper()
			if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
				t.Errorf("%s: %s %q and %q are not one string", when, what, x, y)
			}
		}
		same("project", i1.ProjectID, i2.ProjectID)
		same("vm_state", i1.VMState, i2.VMState)
		same("host", a1.HostID, a2.HostID)
		if i1.Flavor != i2.Flavor || !reflect.DeepEqual(i1.Flavor, f) {
			t.Errorf("%s: flavors %p and %p", when, i1.Flavor, i2.Flavor)
		}
		if reflect.ValueOf(a1.Resources).Pointer() != reflect.ValueOf(a2.Resources).Pointer() || !reflect.DeepEqual(a1.Resources, res) {
			t.Errorf("%s: resource maps %v and %v are not one map", when, a1.Resources, a2.Resources)
		}
		if when == "applied" {
			same("instance id", a1.InstanceID, i1.ID)
		}
	}
	check(u.f.State(), "applied")

	var buf bytes.Buffer
	if err := u.f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	state, err := ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	check(state, "restored")
}
