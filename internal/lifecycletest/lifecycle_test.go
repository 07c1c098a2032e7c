package lifecycletest

import (
	"slices"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// expectSeen fails unless every want (STATUS/task_state) was observed.
func expectSeen(t *testing.T, op string, seen []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(seen, w) {
			t.Errorf("%s: never saw %s; saw %v", op, w, seen)
		}
	}
}

// lastAction returns the newest action and checks every event of it
// finished with want ("Success" or "Error").
func lastAction(t *testing.T, c *cloud, id, name, want string) *structs.InstanceAction {
	t.Helper()
	acts := c.actions(id)
	if len(acts) == 0 {
		t.Fatalf("no actions for %s", id)
	}
	a := acts[0]
	if a.Action != name {
		t.Fatalf("newest action %q, want %q (all: %v)", a.Action, name, actionNames(acts))
	}
	if len(a.Events) == 0 && name != structs.OpLock && name != structs.OpUnlock {
		t.Fatalf("action %s has no events", name)
	}
	for _, ev := range a.Events {
		if want == "" && ev.FinishTime != 0 {
			continue // any result: the caller checks
		}
		if ev.Result != want || ev.FinishTime == 0 {
			t.Fatalf("action %s event %s: result %q finished %d, want %s (%s)", name, ev.Event, ev.Result, ev.FinishTime, want, ev.Details)
		}
	}
	return a
}

func actionNames(acts []*structs.InstanceAction) []string {
	var out []string
	for _, a := range acts {
		out = append(out, a.Action)
	}
	return out
}

// TestPowerOperationsFollowNovaStates runs every operation an instance's
// own host carries out, checking the transient state each shows while
// the (slow) fake hypervisor works, the state it ends in, and the
// instance action it records.
func TestPowerOperationsFollowNovaStates(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1"}})
	id := c.boot("vm", "m1.tiny")
	if a := lastAction(t, c, id, "create", structs.EventSuccess); a.RequestID != "req-create-vm" {
		t.Fatalf("create action %+v", a)
	}
	steps := []struct {
		op        string
		transient string // STATUS/task_state seen while it runs
		end       string
		action    string
	}{
		{structs.OpRebootSoft, "REBOOT/rebooting", "ACTIVE", "reboot"},
		{structs.OpRebootHard, "HARD_REBOOT/rebooting_hard", "ACTIVE", "reboot"},
		{structs.OpPause, "ACTIVE/pausing", "PAUSED", "pause"},
		{structs.OpUnpause, "PAUSED/unpausing", "ACTIVE", "unpause"},
		{structs.OpSuspend, "ACTIVE/suspending", "SUSPENDED", "suspend"},
		{structs.OpResume, "SUSPENDED/resuming", "ACTIVE", "resume"},
		{structs.OpRescue, "ACTIVE/rescuing", "RESCUE", "rescue"},
		{structs.OpUnrescue, "RESCUE/unrescuing", "ACTIVE", "unrescue"},
		{structs.OpStop, "ACTIVE/powering-off", "SHUTOFF", "stop"},
		{structs.OpRebootHard, "SHUTOFF/rebooting_hard", "ACTIVE", "reboot"},
		{structs.OpStop, "ACTIVE/powering-off", "SHUTOFF", "stop"},
		{structs.OpStart, "SHUTOFF/powering-on", "ACTIVE", "start"},
		{structs.OpRebuild, "REBUILD/rebuilding", "ACTIVE", "rebuild"},
	}
	for _, st := range steps {
		stop := c.watch(id)
		c.mustTask(id, st.op)
		inst := c.waitStatus(id, st.end)
		expectSeen(t, st.op, stop(), st.transient, st.end+"/")
		lastAction(t, c, id, st.action, structs.EventSuccess)
		if inst.HostID == "" || inst.Fault != nil {
			t.Fatalf("%s left %+v", st.op, inst)
		}
	}
	if n := c.hv("hv1").drv.Calls("Spawn"); n != 2 {
		t.Fatalf("spawned %d times; want the boot and the rebuild", n)
	}

	// Nova's state checks: 409s that change nothing.
	for _, bad := range []string{structs.OpStart, structs.OpUnpause, structs.OpResume, structs.OpUnrescue, structs.OpConfirmResize, structs.OpRevertResize, structs.OpUnshelve, structs.OpRestore} {
		if _, err := c.task(id, bad); structs.KindOf(err) != structs.KindConflict {
			t.Errorf("%s of an ACTIVE instance: %v, want conflict", bad, err)
		}
	}
	if _, err := c.task(id, "explode"); structs.KindOf(err) != structs.KindInvalid {
		t.Errorf("unknown op: %v", err)
	}

	// A locked instance refuses its members, not its admins; an admin's
	// lock cannot be lifted by the owner.
	c.mustTask(id, structs.OpLock, func(r *structs.InstanceTaskRequest) { r.Reason = "audit"; r.ProjectID = "admin-project" })
	if inst := c.inst(id); !inst.Locked || inst.LockedReason != "audit" || inst.LockedBy != "admin" {
		t.Fatalf("lock: %+v", inst)
	}
	member := func(r *structs.InstanceTaskRequest) { r.Admin = false }
	if _, err := c.task(id, structs.OpStop, member); structs.KindOf(err) != structs.KindConflict || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("member stop of a locked instance: %v", err)
	}
	if _, err := c.task(id, structs.OpUnlock, member); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("owner unlock of an admin lock: %v", err)
	}
	if _, err := c.task(id, structs.OpMigrate, member); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("member migrate: %v", err)
	}
	if _, err := c.task(id, structs.OpStop, func(r *structs.InstanceTaskRequest) { r.Admin, r.ProjectID = false, "other" }); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("other project's stop: %v", err)
	}
	c.mustTask(id, structs.OpUnlock)
	c.mustTask(id, structs.OpStop, member)
	c.waitStatus(id, "SHUTOFF")
}

// TestFailedActionIsRecordedAndLeavesTheInstanceUsable injects a driver
// failure: the action's event says Error, the instance stays as it was.
func TestFailedActionIsRecordedAndLeavesTheInstanceUsable(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1"}})
	id := c.boot("vm", "m1.tiny")
	c.hv("hv1").drv.FailNext("Pause", nil)
	c.mustTask(id, structs.OpPause)
	c.waitStatus(id, "ACTIVE")
	a := lastAction(t, c, id, "pause", structs.EventError)
	if a.Message != "Error" || !strings.Contains(a.Events[0].Details, "injected") {
		t.Fatalf("failed pause action %+v %+v", a, a.Events[0])
	}
	c.mustTask(id, structs.OpPause)
	c.waitStatus(id, "PAUSED")
}
