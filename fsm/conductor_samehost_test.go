package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestSameHostResize drives a resize whose destination is the source's
// own host (allow_resize_to_same_host): with two allocations of the
// instance on one host, the revert deletes the destination's and brings
// the source's back, the confirm releases the source's, and the source's
// reports never pass for the instance's state in between. The
// destination's id sorts after the source's, so that picking the first
// allocation on the host would pick the wrong one.
func TestSameHostResize(t *testing.T) {
	b := taskFixture(t)
	small := structs.DevFlavors()[1]
	res, _ := structs.FlavorResources(small)
	resize := func(dest string) {
		t.Helper()
		sameHost := func(e *structs.InstanceTaskEntry) {
			e.NewFlavor, e.AllowSameHost = small, true
			e.Action.RequestID = "req-resize-" + dest
		}
		if resp := b.task(structs.OpResize, withMove, sameHost); resp != nil {
			t.Fatal(resp)
		}
		if i := b.inst("i1"); !i.Task.AllowSameHost {
			t.Fatalf("task %+v does not allow the same host", i.Task)
		}
		b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: dest, InstanceID: "i1", HostID: "h1",
			EvalID: "e-move", Resources: res, ClientState: structs.AllocClientPending}}})
		b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, 0, "")
		b.reportOn("h1", dest, structs.AllocClientRunning, structs.PowerRunning, 0, "")
		i := b.inst("i1")
		if i.Status() != "VERIFY_RESIZE" || i.HostID != "h1" || i.Resize.SourceAllocID != "a1" {
			t.Fatalf("verify: %s %+v", i.Status(), i)
		}
		b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, 0, "")
		if i := b.inst("i1"); i.Status() != "VERIFY_RESIZE" || i.PowerState != structs.PowerRunning {
			t.Fatalf("the source's report changed the instance: %s power %d", i.Status(), i.PowerState)
		}
	}

	resize("a2")
	if resp := b.task(structs.OpRevertResize); resp != nil {
		t.Fatal(resp)
	}
	a1, _ := b.f.State().AllocationByID(nil, "a1")
	a2, _ := b.f.State().AllocationByID(nil, "a2")
	if a2.DesiredState != structs.AllocDesiredDeleted || a1.DesiredState == structs.AllocDesiredDeleted {
		t.Fatalf("revert: source %s, destination %s; want the destination deleted", a1.DesiredState, a2.DesiredState)
	}
	b.reportOn("h1", "a2", structs.AllocClientDeleted, 0, 0, "")
	if a1, _ = b.f.State().AllocationByID(nil, "a1"); a1.DesiredState != structs.AllocDesiredRunning {
		t.Fatalf("source after the revert: %+v", a1)
	}
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if i := b.inst("i1"); i.Status() != "ACTIVE" || i.Flavor.ID == small.ID || i.Task != nil {
		t.Fatalf("reverted: %s flavor %s task %+v", i.Status(), i.Flavor.ID, i.Task)
	}

	resize("a3")
	if resp := b.task(structs.OpConfirmResize); resp != nil {
		t.Fatal(resp)
	}
	a1, _ = b.f.State().AllocationByID(nil, "a1")
	a3, _ := b.f.State().AllocationByID(nil, "a3")
	if a3 == nil || a3.DesiredState != structs.AllocDesiredRunning || (a1 != nil && a1.DesiredState != structs.AllocDesiredDeleted) {
		t.Fatalf("confirm: source %+v, destination %+v", a1, a3)
	}
	if i := b.inst("i1"); i.Status() != "ACTIVE" || i.Flavor.ID != small.ID {
		t.Fatalf("confirmed: %s flavor %s", i.Status(), i.Flavor.ID)
	}
}
