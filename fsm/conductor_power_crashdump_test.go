package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestTriggerCrashDump: the op asks the agent for the action on an
// ACTIVE instance whose host's driver can, sets no task_state, and ends
// when the agent reports it done, the instance still ACTIVE; a stopped
// instance or a driver without crash dumps is refused.
func TestTriggerCrashDump(t *testing.T) {
	b := taskFixture(t)
	if resp := b.task(structs.OpTriggerCrashDump); structs.KindOf(resp.(error)) != structs.KindConflict {
		t.Fatalf("crash dump on a host without the capability: %v", resp)
	}
	h1 := b.host("h1").Copy()
	h1.Capabilities = []string{structs.HostCapabilityCrashDump}
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h1})
	if resp := b.task(structs.OpTriggerCrashDump); resp != nil {
		t.Fatal(resp)
	}
	i := b.inst("i1")
	if i.Task == nil || i.TaskState != "" || i.Status() != "ACTIVE" {
		t.Fatalf("during the crash dump: task %+v task_state %q status %s", i.Task, i.TaskState, i.Status())
	}
	a, _ := b.f.State().AllocationByID(nil, "a1")
	if a.PendingAction != structs.ActionTriggerCrashDump {
		t.Fatalf("pending action %q", a.PendingAction)
	}
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, a.ActionSeq, "")
	if i := b.inst("i1"); i.Task != nil || i.Status() != "ACTIVE" {
		t.Fatalf("after the crash dump: task %+v status %s", i.Task, i.Status())
	}
	acts, _ := b.f.State().InstanceActions(nil, "i1")
	if acts[0].Action != structs.OpTriggerCrashDump || len(acts[0].Events) != 1 ||
		acts[0].Events[0].Event != evTriggerCrashDump || acts[0].Events[0].Result != structs.EventSuccess {
		t.Fatalf("instance action %+v", acts[0])
	}
	b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, a.ActionSeq, "")
	if resp := b.task(structs.OpTriggerCrashDump, func(e *structs.InstanceTaskEntry) { e.Action.RequestID = "req-2" }); structs.KindOf(resp.(error)) != structs.KindConflict {
		t.Fatalf("crash dump of a stopped instance: %v", resp)
	}
}
