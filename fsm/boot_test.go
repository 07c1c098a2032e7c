package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func bootHost(id string) *structs.Host {
	return &structs.Host{ID: id, Name: "hv-" + id, AZ: "nova", Enabled: true, GossipMember: "agent-" + id,
		Inventories: map[string]*structs.Inventory{
			structs.ResourceVCPU:     {Total: 4, MinUnit: 1, MaxUnit: 4, StepSize: 1, AllocationRatio: 4},
			structs.ResourceMemoryMB: {Total: 8192, Reserved: 512, MinUnit: 1, MaxUnit: 8192, StepSize: 1, AllocationRatio: 1},
		}}
}

func bootInstance(id string) *structs.Instance {
	return &structs.Instance{ID: id, Name: id, Flavor: structs.DevFlavors()[0], FlavorID: "1",
		VMState: structs.VMStateBuilding, TaskState: structs.TaskScheduling}
}

type bootFixture struct {
	t     *testing.T
	f     *FSM
	index uint64
}

func (b *bootFixture) apply(mt structs.MessageType, body any) any {
	b.t.Helper()
	b.index++
	return apply(b.t, b.f, b.index, mt, body)
}

func (b *bootFixture) mustApply(mt structs.MessageType, body any) {
	b.t.Helper()
	if resp := b.apply(mt, body); resp != nil {
		b.t.Fatalf("%s: %v", mt, resp)
	}
}

func (b *bootFixture) inst(id string) *structs.Instance {
	b.t.Helper()
	i, err := b.f.State().InstanceByID(nil, id)
	if err != nil {
		b.t.Fatal(err)
	}
	return i
}

func (b *bootFixture) host(id string) *structs.Host {
	h, _ := b.f.State().HostByID(nil, id)
	return h
}

func newBoot(t *testing.T) *bootFixture {
	b := &bootFixture{t: t, f: testFSM(t)}
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: bootHost("h1")})
	b.createAndPlace("1", "h1")
	return b
}

// createAndPlace creates instance i<n> with evaluation e<n> and commits
// its placement, allocation a<n>, on host.
func (b *bootFixture) createAndPlace(n, host string) {
	b.t.Helper()
	inst, alloc, eval := "i"+n, "a"+n, "e"+n
	b.mustApply(structs.InstanceCreateType, &structs.InstanceCreateEntry{
		Instances: []*structs.Instance{bootInstance(inst)},
		Eval:      &structs.Evaluation{ID: eval, InstanceIDs: []string{inst}, Status: structs.EvalStatusPending},
	})
	res, _ := structs.FlavorResources(structs.DevFlavors()[0])
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{
		Placements: []*structs.Allocation{{ID: alloc, InstanceID: inst, HostID: host, EvalID: eval, Resources: res,
			DesiredState: structs.AllocDesiredRunning, ClientState: structs.AllocClientPending}},
		Evals: []*structs.Evaluation{{ID: eval, InstanceIDs: []string{inst}, Status: structs.EvalStatusComplete}},
	})
}

func (b *bootFixture) report(state string, power int, seq uint64, desc string) any {
	return b.apply(structs.AllocClientUpdateType, &structs.AllocClientUpdateEntry{HostID: "h1", UpdatedAt: 7,
		Updates: []*structs.AllocClientUpdate{{AllocID: "a1", ClientState: state, PowerState: power, ActionDoneSeq: seq, ClientDescription: desc}}})
}

func TestBootLifecycleEntries(t *testing.T) {
	b := newBoot(t)
	if h := b.host("h1"); h.Status != structs.HostStatusUp || h.Usage[structs.ResourceMemoryMB] != 512 || h.Usage[structs.ResourceVCPU] != 1 {
		t.Fatalf("host after placement %+v", h)
	}
	if i := b.inst("i1"); i.HostID != "h1" || i.AZ != "nova" {
		t.Fatalf("instance after placement %+v", i)
	}
	if ev, _ := b.f.State().EvalByID(nil, "e1"); ev.Status != structs.EvalStatusComplete {
		t.Fatalf("eval %+v", ev)
	}
	if resp := b.report(structs.AllocClientSpawning, 0, 0, ""); resp != nil {
		t.Fatal(resp)
	}
	if i := b.inst("i1"); i.TaskState != structs.TaskSpawning || i.Status() != "BUILD" {
		t.Fatalf("spawning: %+v", i)
	}
	b.report(structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if i := b.inst("i1"); i.Status() != "ACTIVE" || i.TaskState != "" || i.PowerState != structs.PowerRunning {
		t.Fatalf("running: %s %+v", i.Status(), i)
	}

	// Stop: desired state changes and the agent is woken by AllocModifyIndex.
	before, _ := b.f.State().AllocationByID(nil, "a1")
	b.mustApply(structs.InstanceActionType, &structs.InstanceActionEntry{InstanceID: "i1", Action: "stop"})
	a, _ := b.f.State().AllocationByID(nil, "a1")
	if a.DesiredState != structs.AllocDesiredStopped || a.AllocModifyIndex <= before.AllocModifyIndex {
		t.Fatalf("stop alloc %+v", a)
	}
	if i := b.inst("i1"); i.TaskState != structs.TaskPoweringOff {
		t.Fatalf("stopping: %+v", i)
	}
	b.report(structs.AllocClientStopped, structs.PowerShutdown, 0, "")
	if i := b.inst("i1"); i.Status() != "SHUTOFF" || i.TaskState != "" {
		t.Fatalf("stopped: %s", i.Status())
	}

	// Reboot is a one-off action tracked by sequence.
	b.mustApply(structs.InstanceActionType, &structs.InstanceActionEntry{InstanceID: "i1", Action: "start"})
	b.report(structs.AllocClientRunning, structs.PowerRunning, 0, "")
	b.mustApply(structs.InstanceActionType, &structs.InstanceActionEntry{InstanceID: "i1", Action: structs.ActionRebootHard})
	a, _ = b.f.State().AllocationByID(nil, "a1")
	if a.PendingAction != structs.ActionRebootHard || b.inst("i1").Status() != "HARD_REBOOT" {
		t.Fatalf("reboot pending %+v", a)
	}
	b.report(structs.AllocClientRunning, structs.PowerRunning, a.ActionSeq, "")
	a, _ = b.f.State().AllocationByID(nil, "a1")
	if a.PendingAction != "" || b.inst("i1").Status() != "ACTIVE" {
		t.Fatalf("reboot done %+v %s", a, b.inst("i1").Status())
	}
	if resp := b.apply(structs.InstanceActionType, &structs.InstanceActionEntry{InstanceID: "i1", Action: "dance"}); resp == nil {
		t.Fatal("unknown action accepted")
	}

	// Delete: deleting until the agent reports, then gone with its usage.
	b.mustApply(structs.InstanceDeleteType, &structs.InstanceDeleteEntry{Deleting: []string{"i1"}})
	if i := b.inst("i1"); i.TaskState != structs.TaskDeleting {
		t.Fatalf("deleting: %+v", i)
	}
	b.report(structs.AllocClientDeleted, 0, 0, "")
	if i := b.inst("i1"); i != nil {
		t.Fatalf("instance survived delete: %+v", i)
	}
	if h := b.host("h1"); len(h.Usage) != 0 {
		t.Fatalf("usage left after delete: %v", h.Usage)
	}
}

func TestFailedBuildIsRescheduledOrErrors(t *testing.T) {
	b := newBoot(t)
	resp := b.apply(structs.AllocClientUpdateType, &structs.AllocClientUpdateEntry{HostID: "h1",
		Updates:     []*structs.AllocClientUpdate{{AllocID: "a1", ClientState: structs.AllocClientFailed, ClientDescription: "disk full"}},
		Reschedules: []*structs.Evaluation{{ID: "e2", InstanceIDs: []string{"i1"}, Status: structs.EvalStatusPending, TriggeredBy: structs.EvalTriggerReschedule}},
	})
	if resp != nil {
		t.Fatal(resp)
	}
	i := b.inst("i1")
	if i.Status() != "BUILD" || i.TaskState != structs.TaskScheduling || i.HostID != "" || len(i.Attempts) != 1 || i.Attempts[0].Error != "disk full" {
		t.Fatalf("rescheduled instance %+v", i)
	}
	h := b.host("h1")
	if h.BuildFailures != 1 || len(h.Usage) != 0 {
		t.Fatalf("host after failure %+v", h)
	}
	if ev, _ := b.f.State().EvalByID(nil, "e2"); ev == nil {
		t.Fatal("reschedule eval missing")
	}

	// A report about another host's allocation is refused.
	b2 := newBoot(t)
	resp = b2.apply(structs.AllocClientUpdateType, &structs.AllocClientUpdateEntry{HostID: "intruder",
		Updates: []*structs.AllocClientUpdate{{AllocID: "a1", ClientState: structs.AllocClientRunning}}})
	if structs.KindOf(resp.(error)) != structs.KindPermission {
		t.Fatalf("foreign report: %v", resp)
	}

	// Without a reschedule the build ends in ERROR with the given fault.
	b3 := newBoot(t)
	b3.mustApply(structs.AllocClientUpdateType, &structs.AllocClientUpdateEntry{HostID: "h1",
		Updates: []*structs.AllocClientUpdate{{AllocID: "a1", ClientState: structs.AllocClientFailed, ClientDescription: "boom"}},
		Faults:  map[string]*structs.Fault{"i1": {Code: 500, Message: "Exceeded maximum number of retries"}},
	})
	if i := b3.inst("i1"); i.Status() != "ERROR" || i.Fault == nil || i.Fault.Message != "Exceeded maximum number of retries" {
		t.Fatalf("errored instance %+v", i)
	}
}

func TestHostEntries(t *testing.T) {
	b := newBoot(t)
	b.report(structs.AllocClientRunning, structs.PowerRunning, 0, "")
	b.mustApply(structs.HostStatusUpdateType, &structs.HostStatusUpdateEntry{HostIDs: []string{"h1"}, Status: structs.HostStatusDown, UpdatedAt: 9})
	if h := b.host("h1"); h.Status != structs.HostStatusDown || h.StatusUpdatedAt != 9 {
		t.Fatalf("down host %+v", h)
	}
	if i := b.inst("i1"); i.PowerState != structs.PowerNoState {
		t.Fatalf("instance on a down host has power %d", i.PowerState)
	}
	b.mustApply(structs.HostEnabledUpdateType, &structs.HostEnabledUpdateEntry{HostID: "h1", Enabled: false, Reason: "maintenance"})
	// Re-registering keeps what the servers own and marks it up.
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: bootHost("h1")})
	h := b.host("h1")
	if h.Status != structs.HostStatusUp || h.Enabled || h.DisabledReason != "maintenance" || h.Usage[structs.ResourceVCPU] != 1 {
		t.Fatalf("re-registered host %+v", h)
	}
	if resp := b.apply(structs.HostEnabledUpdateType, &structs.HostEnabledUpdateEntry{HostID: "nope", Enabled: true}); resp == nil {
		t.Fatal("enable of a missing host accepted")
	}
	// Purging frees usage at once.
	b.mustApply(structs.InstanceDeleteType, &structs.InstanceDeleteEntry{Purge: []string{"i1"}})
	if h := b.host("h1"); len(h.Usage) != 0 || b.inst("i1") != nil {
		t.Fatalf("purge left %v", h.Usage)
	}
	b.mustApply(structs.EvalUpdateType, &structs.EvalUpdateEntry{Evals: []*structs.Evaluation{{ID: "e1", Status: structs.EvalStatusFailed}}})
	if ev, _ := b.f.State().EvalByID(nil, "e1"); ev.Status != structs.EvalStatusFailed || ev.CreateIndex != 2 {
		t.Fatalf("eval update %+v", ev)
	}
}

func TestGuestShutdownIsAccepted(t *testing.T) {
	b := newBoot(t)
	b.report(structs.AllocClientRunning, structs.PowerRunning, 0, "")
	before, _ := b.f.State().AllocationByID(nil, "a1")
	b.report(structs.AllocClientStopped, structs.PowerShutdown, 0, "")
	a, _ := b.f.State().AllocationByID(nil, "a1")
	if a.DesiredState != structs.AllocDesiredStopped || a.AllocModifyIndex <= before.AllocModifyIndex {
		t.Fatalf("alloc after guest shutdown %+v", a)
	}
	if i := b.inst("i1"); i.Status() != "SHUTOFF" || i.TaskState != "" {
		t.Fatalf("instance %s task %q", i.Status(), i.TaskState)
	}
	// A later start flips it back and wakes the agent.
	b.mustApply(structs.InstanceActionType, &structs.InstanceActionEntry{InstanceID: "i1", Action: "start"})
	a2, _ := b.f.State().AllocationByID(nil, "a1")
	if a2.DesiredState != structs.AllocDesiredRunning || a2.AllocModifyIndex <= a.AllocModifyIndex {
		t.Fatalf("alloc after start %+v", a2)
	}
}

// TestBuildSuccessClearsFailures: a build that succeeds resets its
// host's failure count, and a host without failures is not rewritten (a
// host write wakes every watcher of the hosts table).
func TestBuildSuccessClearsFailures(t *testing.T) {
	b := newBoot(t)
	before := b.host("h1").ModifyIndex
	b.report(structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if h := b.host("h1"); h.ModifyIndex != before {
		t.Fatalf("host without failures rewritten by a running report: index %d, was %d", h.ModifyIndex, before)
	}
	if i := b.inst("i1"); i.Status() != "ACTIVE" {
		t.Fatalf("instance %s after a running report", i.Status())
	}

	b2 := newBoot(t)
	b2.mustApply(structs.AllocClientUpdateType, &structs.AllocClientUpdateEntry{HostID: "h1",
		Updates: []*structs.AllocClientUpdate{{AllocID: "a1", ClientState: structs.AllocClientFailed, ClientDescription: "boom"}}})
	if h := b2.host("h1"); h.BuildFailures != 1 {
		t.Fatalf("failures after a failed build: %d", h.BuildFailures)
	}
	b2.createAndPlace("2", "h1")
	b2.mustApply(structs.AllocClientUpdateType, &structs.AllocClientUpdateEntry{HostID: "h1",
		Updates: []*structs.AllocClientUpdate{{AllocID: "a2", ClientState: structs.AllocClientRunning, PowerState: structs.PowerRunning}}})
	if h := b2.host("h1"); h.BuildFailures != 0 || h.ModifyIndex != b2.index {
		t.Fatalf("host after a successful build: failures %d, index %d (entry %d)", h.BuildFailures, h.ModifyIndex, b2.index)
	}
}
