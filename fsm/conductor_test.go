package fsm

import (
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// taskFixture is a booted, running instance i1 on h1 with a second host
// h2, both with every capability but live migration on h1.
func taskFixture(t *testing.T) *bootFixture {
	b := newBoot(t)
	b.report(structs.AllocClientRunning, structs.PowerRunning, 0, "")
	h2 := bootHost("h2")
	h2.Capabilities = []string{structs.HostCapabilityLiveMigrate, structs.HostCapabilityPause}
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h2})
	return b
}

func (b *bootFixture) task(op string, tweak ...func(*structs.InstanceTaskEntry)) any {
	b.t.Helper()
	e := &structs.InstanceTaskEntry{InstanceID: "i1", Op: op, UpdatedAt: int64(100 + b.index),
		Action: &structs.InstanceAction{RequestID: "req-" + op, InstanceID: "i1", Action: op, StartTime: 1}}
	for _, f := range tweak {
		f(e)
	}
	return b.apply(structs.InstanceTaskType, e)
}

func (b *bootFixture) reportOn(host, alloc, state string, power int, seq uint64, actionErr string) {
	b.t.Helper()
	b.mustApply(structs.AllocClientUpdateType, &structs.AllocClientUpdateEntry{HostID: host, UpdatedAt: int64(100 + b.index),
		Updates: []*structs.AllocClientUpdate{{AllocID: alloc, ClientState: state, PowerState: power, ActionDoneSeq: seq, ActionError: actionErr}}})
}

func withMove(e *structs.InstanceTaskEntry) {
	e.Eval = &structs.Evaluation{ID: "e-move", InstanceIDs: []string{"i1"}, Status: structs.EvalStatusPending}
	e.Migration = &structs.Migration{UUID: "m-1"}
}

// TestRefusedOperationsChangeNothing: a refused operation leaves the
// state exactly as it was, action record included.
func TestRefusedOperationsChangeNothing(t *testing.T) {
	b := taskFixture(t)
	before := dump(t, b.f.State())
	for _, tc := range []struct {
		op   string
		kind structs.ErrorKind
		opt  func(*structs.InstanceTaskEntry)
	}{
		{structs.OpPause, structs.KindConflict, nil},            // h1's driver cannot pause
		{structs.OpLiveMigrate, structs.KindConflict, withMove}, // nor live-migrate
		{structs.OpStart, structs.KindConflict, nil},            // already running
		{structs.OpConfirmResize, structs.KindConflict, nil},
		{structs.OpEvacuate, structs.KindConflict, withMove}, // its host is up
		{structs.OpResize, structs.KindInvalid, nil},         // no evaluation
		{"nope", structs.KindInvalid, nil},
	} {
		var opts []func(*structs.InstanceTaskEntry)
		if tc.opt != nil {
			opts = append(opts, tc.opt)
		}
		resp := b.task(tc.op, opts...)
		err, _ := resp.(error)
		if structs.KindOf(err) != tc.kind {
			t.Fatalf("%s: %v, want %s", tc.op, resp, tc.kind)
		}
	}
	after := dump(t, b.f.State())
	delete(before, tableIndex)
	delete(after, tableIndex)
	if !reflect.DeepEqual(before, after) {
		t.Fatal("a refused operation changed the state")
	}
}

// TestOneTaskAtATime: a second operation while one runs is a conflict.
func TestOneTaskAtATime(t *testing.T) {
	b := taskFixture(t)
	if resp := b.task(structs.OpRebootSoft); resp != nil {
		t.Fatal(resp)
	}
	if err, _ := b.task(structs.OpStop).(error); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("stop during a reboot: %v", err)
	}
	a, _ := b.f.State().AllocationByID(nil, "a1")
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, a.ActionSeq, "")
	if i := b.inst("i1"); i.Task != nil || i.Status() != "ACTIVE" {
		t.Fatalf("after the reboot %+v", i)
	}
	if resp := b.task(structs.OpStop); resp != nil {
		t.Fatalf("stop after the reboot: %v", resp)
	}
}

// TestRetriedRequestAppliesOnce: an entry repeating an applied request
// (a client retry after a leader change) changes nothing and says where
// the first one was applied, even once that operation is over.
func TestRetriedRequestAppliesOnce(t *testing.T) {
	b := taskFixture(t)
	if resp := b.task(structs.OpRebootSoft); resp != nil {
		t.Fatal(resp)
	}
	first := b.index
	before := dump(t, b.f.State())
	dup, ok := b.task(structs.OpRebootSoft).(*TaskAlreadyApplied)
	if !ok || dup.Index != first {
		t.Fatalf("retry answered %#v, want TaskAlreadyApplied at %d", dup, first)
	}
	after := dump(t, b.f.State())
	delete(before, tableIndex)
	delete(after, tableIndex)
	if !reflect.DeepEqual(before, after) {
		t.Fatal("a retried request changed the state")
	}
	a, _ := b.f.State().AllocationByID(nil, "a1")
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, a.ActionSeq, "")
	if _, ok := b.task(structs.OpRebootSoft).(*TaskAlreadyApplied); !ok {
		t.Fatal("a retry after the reboot finished rebooted again")
	}
	if a2, _ := b.f.State().AllocationByID(nil, "a1"); a2.ActionSeq != a.ActionSeq {
		t.Fatalf("action seq moved from %d to %d", a.ActionSeq, a2.ActionSeq)
	}
}

// TestResizeStepByStep drives a resize entry by entry and deletes the
// instance in VERIFY_RESIZE: both copies are destroyed, then it goes.
func TestResizeStepByStep(t *testing.T) {
	b := taskFixture(t)
	small := structs.DevFlavors()[1]
	if resp := b.task(structs.OpResize, withMove, func(e *structs.InstanceTaskEntry) { e.NewFlavor = small }); resp != nil {
		t.Fatal(resp)
	}
	i := b.inst("i1")
	if i.Status() != "RESIZE" || i.TaskState != structs.TaskResizePrep || i.Task.Step != structs.StepSchedule {
		t.Fatalf("resize started: %s %+v", i.Status(), i.Task)
	}
	res, _ := structs.FlavorResources(small)
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a2", InstanceID: "i1", HostID: "h2",
		EvalID: "e-move", Resources: res, ClientState: structs.AllocClientPending}}})
	a2, _ := b.f.State().AllocationByID(nil, "a2")
	a1, _ := b.f.State().AllocationByID(nil, "a1")
	if a2.DesiredState != structs.AllocDesiredHeld || a2.Flavor == nil || a1.DesiredState != structs.AllocDesiredStopped {
		t.Fatalf("placed: dest %+v source %+v", a2, a1)
	}
	if h := b.host("h2"); h.Usage[structs.ResourceMemoryMB] != 2048 {
		t.Fatalf("held destination not counted: %v", h.Usage)
	}
	// A duplicate plan for the same evaluation changes nothing.
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a3", InstanceID: "i1", HostID: "h2",
		EvalID: "e-move", Resources: res}}})
	if a3, _ := b.f.State().AllocationByID(nil, "a3"); a3 != nil {
		t.Fatal("a second destination was placed")
	}
	b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, 0, "")
	if a2, _ = b.f.State().AllocationByID(nil, "a2"); a2.DesiredState != structs.AllocDesiredRunning {
		t.Fatalf("destination not released to spawn: %+v", a2)
	}
	b.reportOn("h2", "a2", structs.AllocClientRunning, structs.PowerRunning, 0, "")
	i = b.inst("i1")
	if i.Status() != "VERIFY_RESIZE" || i.HostID != "h2" || i.Flavor.ID != small.ID || i.Resize.SourceAllocID != "a1" {
		t.Fatalf("verify: %s %+v", i.Status(), i)
	}
	// The source's leftover reports do not touch the instance.
	b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, 0, "")
	if got := b.inst("i1"); got.Status() != "VERIFY_RESIZE" {
		t.Fatalf("source report changed the instance: %s", got.Status())
	}
	b.mustApply(structs.InstanceDeleteType, &structs.InstanceDeleteEntry{Deleting: []string{"i1"}, UpdatedAt: 500})
	for _, id := range []string{"a1", "a2"} {
		if a, _ := b.f.State().AllocationByID(nil, id); a.DesiredState != structs.AllocDesiredDeleted {
			t.Fatalf("%s not being deleted: %+v", id, a)
		}
	}
	b.reportOn("h2", "a2", structs.AllocClientDeleted, 0, 0, "")
	if b.inst("i1") == nil {
		t.Fatal("purged while the source copy still exists")
	}
	b.reportOn("h1", "a1", structs.AllocClientDeleted, 0, 0, "")
	if b.inst("i1") != nil {
		t.Fatal("not purged once both copies went")
	}
	for _, h := range []string{"h1", "h2"} {
		for class, n := range b.host(h).Usage {
			if n != 0 {
				t.Fatalf("%s still uses %d %s", h, n, class)
			}
		}
	}
}

// TestLifecycleIsDeterministic replays the same entries on two FSMs:
// the states are identical.
func TestLifecycleIsDeterministic(t *testing.T) {
	run := func() map[string][]any {
		b := taskFixture(t)
		b.task(structs.OpRebootHard)
		a, _ := b.f.State().AllocationByID(nil, "a1")
		b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, a.ActionSeq, "boom")
		b.task(structs.OpShelve, func(e *structs.InstanceTaskEntry) { e.Offload = true })
		b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, a.ActionSeq, "")
		b.reportOn("h1", "a1", structs.AllocClientDeleted, 0, a.ActionSeq, "")
		return dump(t, b.f.State())
	}
	one, two := run(), run()
	if !reflect.DeepEqual(one, two) {
		t.Fatal("the same entries gave different states")
	}
	var inst *structs.Instance
	for _, raw := range one[TableInstances] {
		inst = raw.(*structs.Instance)
	}
	if inst.Status() != "SHELVED_OFFLOADED" || inst.HostID != "" {
		t.Fatalf("end state %s %+v", inst.Status(), inst)
	}
}
