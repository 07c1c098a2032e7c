package fsm

import (
	"fmt"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// putVolume stores a volume as its storage host left it.
func (b *bootFixture) putVolume(v *structs.Volume) {
	b.t.Helper()
	b.index++
	txn := b.f.State().writeTxn()
	defer txn.Abort()
	v.CreateIndex, v.ModifyIndex = b.index, b.index
	if err := txn.Insert(TableVolumes, v); err != nil {
		b.t.Fatal(err)
	}
	if err := commitAt(txn, b.index, TableVolumes); err != nil {
		b.t.Fatal(err)
	}
}

// attachFixture is taskFixture with i1 in project p1.
func attachFixture(t *testing.T) *bootFixture {
	b := taskFixture(t)
	b.index++
	txn := b.f.State().writeTxn()
	defer txn.Abort()
	inst := b.inst("i1").Copy()
	inst.ProjectID = "p1"
	if err := insertInstance(txn, inst); err != nil {
		t.Fatal(err)
	}
	if err := commitAt(txn, b.index, TableInstances); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *bootFixture) volume(id string) *structs.Volume {
	b.t.Helper()
	v, err := b.f.State().Volume(nil, id)
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

func withVolume(id, device string) func(*structs.InstanceTaskEntry) {
	return func(e *structs.InstanceTaskEntry) {
		e.Volume = &structs.VolumeAttachRequest{VolumeID: id, AttachmentID: "att-" + id, Device: device, DeleteOnTermination: id == "v2"}
		e.Action.RequestID += "-" + id
	}
}

// TestVolumeAttachDetachFlow: an attach reserves the available volume
// (attaching, with its attachment) in the entry that asks the agent for
// the hot-plug, the agent's report makes it in-use, and a detach takes
// it back to available; a failed attach leaves it available with no
// attachment, a failed detach in-use. Volumes that are missing, in use,
// or kept on another host are refused with Cinder's kinds.
func TestVolumeAttachDetachFlow(t *testing.T) {
	b := attachFixture(t)
	b.putVolume(&structs.Volume{ID: "v1", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h1", ProviderLocation: "/pool/volume-v1.qcow2"})
	b.putVolume(&structs.Volume{ID: "v-far", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h2", ProviderLocation: "/pool/volume-v-far.qcow2"})
	b.putVolume(&structs.Volume{ID: "v-other", ProjectID: "p-other", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h1"})

	refused := func(op, id string, kind structs.ErrorKind) {
		t.Helper()
		again := func(e *structs.InstanceTaskEntry) { e.Action.RequestID += fmt.Sprintf("-%d", b.index) }
		if err, _ := b.task(op, withVolume(id, ""), again).(error); structs.KindOf(err) != kind {
			t.Fatalf("%s %s: %v, want %s", op, id, err, kind)
		}
	}
	refused(structs.OpAttachVolume, "v-missing", structs.KindNotFound)
	refused(structs.OpAttachVolume, "v-other", structs.KindNotFound)
	refused(structs.OpAttachVolume, "v-far", structs.KindInvalid)
	refused(structs.OpDetachVolume, "v1", structs.KindNotFound)

	if resp := b.task(structs.OpAttachVolume, withVolume("v1", "")); resp != nil {
		t.Fatalf("attach: %v", resp)
	}
	v, a := b.volume("v1"), b.alloc("a1")
	if v.Status != structs.VolumeAttaching || len(v.Attachments) != 1 || v.Attachments[0].Device != "/dev/sdb" ||
		v.Attachments[0].Host != "h1" || v.Attachments[0].AttachedAt != 0 || a.PendingAction != structs.ActionAttachVolume {
		t.Fatalf("attaching: %+v %+v, alloc %q", v, v.Attachments, a.PendingAction)
	}
	arg, err := structs.ParseVolumeActionArg(a.ActionArg)
	if err != nil || arg != (structs.VolumeActionArg{VolumeID: "v1", AttachmentID: "att-v1", Path: "/pool/volume-v1.qcow2", Device: "/dev/sdb"}) {
		t.Fatalf("action arg %q: %+v %v", a.ActionArg, arg, err)
	}
	if inst := b.inst("i1"); inst.Task == nil || inst.TaskState != "" {
		t.Fatalf("instance during the attach: %+v %q", inst.Task, inst.TaskState)
	}
	refused(structs.OpDetachVolume, "v1", structs.KindConflict) // the attach still runs

	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, a.ActionSeq, "")
	if v := b.volume("v1"); v.Status != structs.VolumeInUse || v.Attachments[0].AttachedAt == 0 {
		t.Fatalf("attached: %+v", v)
	}
	if inst := b.inst("i1"); inst.Task != nil || inst.VMState != structs.VMStateActive {
		t.Fatalf("instance after the attach: %+v %s", inst.Task, inst.VMState)
	}
	refused(structs.OpAttachVolume, "v1", structs.KindInvalid) // already attached
	for _, op := range []string{structs.OpResize, structs.OpMigrate, structs.OpLiveMigrate, structs.OpShelve} {
		refused(op, "v1", structs.KindConflict) // h1 serves no NBD exports: the volume cannot follow
	}

	// A failed detach leaves the volume in use, a successful one frees it.
	if resp := b.task(structs.OpDetachVolume, withVolume("v1", "")); resp != nil {
		t.Fatalf("detach: %v", resp)
	}
	a = b.alloc("a1")
	if v := b.volume("v1"); v.Status != structs.VolumeDetaching || a.PendingAction != structs.ActionDetachVolume {
		t.Fatalf("detaching: %s %q", v.Status, a.PendingAction)
	}
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, a.ActionSeq, "device busy")
	if v := b.volume("v1"); v.Status != structs.VolumeInUse || len(v.Attachments) != 1 {
		t.Fatalf("after a failed detach: %+v", v)
	}
	if resp := b.task(structs.OpDetachVolume, withVolume("v1", ""), func(e *structs.InstanceTaskEntry) { e.Action.RequestID += "-2" }); resp != nil {
		t.Fatalf("detach again: %v", resp)
	}
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, b.alloc("a1").ActionSeq, "")
	if v := b.volume("v1"); v.Status != structs.VolumeAvailable || len(v.Attachments) != 0 {
		t.Fatalf("detached: %+v", v)
	}

	// A vdX name cannot be had on the SCSI bus: the first free sdX is.
	if resp := b.task(structs.OpAttachVolume, withVolume("v1", "/dev/vdc"), func(e *structs.InstanceTaskEntry) { e.Action.RequestID += "-vd" }); resp != nil {
		t.Fatalf("attach as vdc: %v", resp)
	}
	if v := b.volume("v1"); v.Attachments[0].Device != "/dev/sdb" {
		t.Fatalf("vdc asked: %+v", v.Attachments[0])
	}
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, b.alloc("a1").ActionSeq, "no such file")

	// A failed attach frees the volume again.
	if resp := b.task(structs.OpAttachVolume, withVolume("v1", "/dev/sdc"), func(e *structs.InstanceTaskEntry) { e.Action.RequestID += "-2" }); resp != nil {
		t.Fatalf("attach again: %v", resp)
	}
	if v := b.volume("v1"); v.Attachments[0].Device != "/dev/sdc" {
		t.Fatalf("asked device: %+v", v.Attachments[0])
	}
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, b.alloc("a1").ActionSeq, "no such file")
	if v := b.volume("v1"); v.Status != structs.VolumeAvailable || len(v.Attachments) != 0 {
		t.Fatalf("after a failed attach: %+v", v)
	}
	if inst := b.inst("i1"); inst.Task != nil || inst.VMState != structs.VMStateActive {
		t.Fatalf("instance after a failed attach: %+v %s", inst.Task, inst.VMState)
	}
}

// TestDeletingAnInstanceReleasesItsVolumes: once the instance is gone
// its volumes are available again, except one attached with
// delete_on_termination, which goes to its storage host to delete.
func TestDeletingAnInstanceReleasesItsVolumes(t *testing.T) {
	b := attachFixture(t)
	for _, id := range []string{"v1", "v2"} {
		b.putVolume(&structs.Volume{ID: id, ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h1", ProviderLocation: "/pool/" + id})
		if resp := b.task(structs.OpAttachVolume, withVolume(id, "")); resp != nil {
			t.Fatalf("attach %s: %v", id, resp)
		}
		b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, b.alloc("a1").ActionSeq, "")
	}
	if d1, d2 := b.volume("v1").Attachments[0].Device, b.volume("v2").Attachments[0].Device; d1 != "/dev/sdb" || d2 != "/dev/sdc" {
		t.Fatalf("devices %s %s", d1, d2)
	}
	b.mustApply(structs.InstanceDeleteType, &structs.InstanceDeleteEntry{Deleting: []string{"i1"}})
	if v := b.volume("v1"); v.Status != structs.VolumeInUse {
		t.Fatalf("released before the guest is gone: %s", v.Status)
	}
	b.reportOn("h1", "a1", structs.AllocClientDeleted, 0, 0, "")
	if b.inst("i1") != nil {
		t.Fatal("instance not purged")
	}
	if v := b.volume("v1"); v.Status != structs.VolumeAvailable || len(v.Attachments) != 0 {
		t.Fatalf("v1 after the delete: %+v", v)
	}
	if v := b.volume("v2"); v.Status != structs.VolumeDeleting || len(v.Attachments) != 0 {
		t.Fatalf("v2 (delete_on_termination) after the delete: %+v", v)
	}
}

func (b *bootFixture) alloc(id string) *structs.Allocation {
	b.t.Helper()
	a, err := b.f.State().AllocationByID(nil, id)
	if err != nil {
		b.t.Fatal(err)
	}
	return a
}

// TestAttachEndsWithItsTask: an attach whose task ends otherwise than by
// the agent's report of the action (the allocation failed, an admin
// reset the instance) leaves the volume available, not attaching.
func TestAttachEndsWithItsTask(t *testing.T) {
	b := attachFixture(t)
	b.putVolume(&structs.Volume{ID: "v1", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h1", ProviderLocation: "/pool/v1"})
	if resp := b.task(structs.OpAttachVolume, withVolume("v1", "")); resp != nil {
		t.Fatalf("attach: %v", resp)
	}
	if resp := b.task(structs.OpResetState, func(e *structs.InstanceTaskEntry) { e.State = structs.VMStateActive; e.Action = nil }); resp != nil {
		t.Fatalf("reset: %v", resp)
	}
	if v := b.volume("v1"); v.Status != structs.VolumeAvailable || len(v.Attachments) != 0 {
		t.Fatalf("after the reset: %+v", v)
	}
	if inst := b.inst("i1"); inst.Task != nil {
		t.Fatalf("task left: %+v", inst.Task)
	}
}
