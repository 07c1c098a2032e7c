package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func withState(state string) func(*structs.InstanceTaskEntry) {
	return func(e *structs.InstanceTaskEntry) { e.State, e.Action = state, nil }
}

// TestResetStateAbandonsAMove: resetting an instance mid-resize drops
// the task, releases the held destination and fails the migration; the
// instance stays on its source with the forced vm_state.
func TestResetStateAbandonsAMove(t *testing.T) {
	b := taskFixture(t)
	small := structs.DevFlavors()[1]
	if resp := b.task(structs.OpResize, withMove, func(e *structs.InstanceTaskEntry) { e.NewFlavor = small }); resp != nil {
		t.Fatal(resp)
	}
	res, _ := structs.FlavorResources(small)
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a2", InstanceID: "i1", HostID: "h2",
		EvalID: "e-move", Resources: res, ClientState: structs.AllocClientPending}}})
	if resp := b.task(structs.OpResetState, withState("paused")); structs.KindOf(resp.(error)) != structs.KindInvalid {
		t.Fatalf("reset to paused: %v", resp)
	}
	if resp := b.task(structs.OpResetState, withState(structs.VMStateError)); resp != nil {
		t.Fatal(resp)
	}
	i := b.inst("i1")
	if i.Task != nil || i.TaskState != "" || i.VMState != structs.VMStateError || i.HostID != "h1" {
		t.Fatalf("after reset: %s task %+v on %s", i.VMState, i.Task, i.HostID)
	}
	if a2, _ := b.f.State().AllocationByID(nil, "a2"); a2 != nil {
		t.Fatalf("held destination kept: %+v", a2)
	}
	if h := b.host("h2"); h.Usage[structs.ResourceMemoryMB] != 0 {
		t.Fatalf("destination resources still used: %v", h.Usage)
	}
	migs, _ := b.f.State().Migrations(nil)
	if len(migs) != 1 || migs[0].Status != structs.MigrationError {
		t.Fatalf("migrations %+v", migs)
	}
	if resp := b.task(structs.OpResetState, withState(structs.VMStateActive)); resp != nil {
		t.Fatal(resp)
	}
	if i := b.inst("i1"); i.Status() != "ACTIVE" {
		t.Fatalf("reset to active: %s", i.Status())
	}
}
