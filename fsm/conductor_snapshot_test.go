package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestSnapshotLifecycle: createImage needs the image and a host that can
// snapshot; it puts the instance in image_snapshot with the action for
// the agent, moves through the steps the agent reports (only forwards,
// only for its own action) and ends with the agent's report; a failed
// backup ends the task with the instance as it was.
func TestSnapshotLifecycle(t *testing.T) {
	b := taskFixture(t)
	withImage := func(id string) func(*structs.InstanceTaskEntry) {
		return func(e *structs.InstanceTaskEntry) { e.ImageID = id }
	}
	if err, _ := b.task(structs.OpCreateImage).(error); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("without an image: %v", err)
	}
	if err, _ := b.task(structs.OpCreateImage, withImage("img-1")).(error); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("on a host that cannot snapshot: %v", err)
	}
	h1 := bootHost("h1")
	h1.Capabilities = []string{structs.HostCapabilitySnapshot}
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h1})

	if resp := b.task(structs.OpCreateImage, withImage("img-1")); resp != nil {
		t.Fatalf("createImage: %v", resp)
	}
	inst := b.inst("i1")
	a, err := b.f.State().AllocationByID(nil, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if inst.TaskState != structs.TaskImageSnapshot || inst.Task == nil || a.PendingAction != structs.ActionSnapshot ||
		a.ActionArg != "img-1" || a.ActionSeq == 0 {
		t.Fatalf("started: task %q %+v, alloc action %q %q seq %d", inst.TaskState, inst.Task, a.PendingAction, a.ActionArg, a.ActionSeq)
	}
	otherRequest := func(e *structs.InstanceTaskEntry) { e.Action.RequestID = "req-other" }
	if err, _ := b.task(structs.OpCreateImage, withImage("img-x"), otherRequest).(error); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("a second snapshot while one runs: %v", err)
	}
	progress := func(seq uint64, state, want string) {
		t.Helper()
		b.mustApply(structs.SnapshotProgressType, &structs.SnapshotProgressEntry{InstanceID: "i1", AllocID: "a1", ActionSeq: seq, TaskState: state})
		if got := b.inst("i1").TaskState; got != want {
			t.Fatalf("after %s (seq %d): task_state %q, want %q", state, seq, got, want)
		}
	}
	progress(a.ActionSeq+1, structs.TaskImageUploading, structs.TaskImageSnapshot) // another action's
	progress(a.ActionSeq, structs.TaskImagePendingUpload, structs.TaskImagePendingUpload)
	progress(a.ActionSeq, structs.TaskImageUploading, structs.TaskImageUploading)
	progress(a.ActionSeq, structs.TaskImagePendingUpload, structs.TaskImageUploading) // never backwards
	if err, _ := b.apply(structs.SnapshotProgressType, &structs.SnapshotProgressEntry{InstanceID: "i1", AllocID: "a1",
		ActionSeq: a.ActionSeq, TaskState: structs.TaskRebooting}).(error); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("a task_state that is no snapshot step: %v", err)
	}

	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, a.ActionSeq, "")
	if inst := b.inst("i1"); inst.Task != nil || inst.TaskState != "" || inst.VMState != structs.VMStateActive {
		t.Fatalf("finished: task %+v %q vm_state %s", inst.Task, inst.TaskState, inst.VMState)
	}
	// A late report of the finished snapshot changes nothing.
	progress(a.ActionSeq, structs.TaskImageUploading, "")

	if resp := b.task(structs.OpCreateBackup, withImage("img-2"), func(e *structs.InstanceTaskEntry) { e.Rotation = 2 }); resp != nil {
		t.Fatalf("createBackup: %v", resp)
	}
	a, _ = b.f.State().AllocationByID(nil, "a1")
	arg, err := structs.ParseSnapshotArg(a.ActionArg)
	if err != nil || arg != (structs.SnapshotArg{ImageID: "img-2", Backup: true, Rotation: 2}) || b.inst("i1").TaskState != structs.TaskImageBackup {
		t.Fatalf("backup: arg %q (%+v, %v), task_state %q", a.ActionArg, arg, err, b.inst("i1").TaskState)
	}
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, a.ActionSeq, "disk full")
	if inst := b.inst("i1"); inst.Task != nil || inst.TaskState != "" || inst.VMState != structs.VMStateActive {
		t.Fatalf("failed backup: task %+v %q vm_state %s", inst.Task, inst.TaskState, inst.VMState)
	}
}

// TestSnapshotArg: the action argument round-trips and bad ones are
// refused.
func TestSnapshotArg(t *testing.T) {
	for _, a := range []structs.SnapshotArg{{ImageID: "i"}, {ImageID: "i", Backup: true}, {ImageID: "i", Backup: true, Rotation: 7}} {
		got, err := structs.ParseSnapshotArg(a.String())
		if err != nil || got != a {
			t.Errorf("%+v → %q → %+v, %v", a, a.String(), got, err)
		}
	}
	for _, bad := range []string{"", ";rotation=1", "i;rotation=-1", "i;rotation=x", "i;turn=1"} {
		if _, err := structs.ParseSnapshotArg(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
