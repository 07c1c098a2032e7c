package fsm

import (
	"bytes"
	"io"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// buildCreate is a create entry whose instance id waits for the volumes
// it makes: one per block device with a source, each made for it.
func buildCreate(id string, at int64, devices ...*structs.BlockDevice) *structs.InstanceCreateEntry {
	inst := bfvInstance(id, devices...)
	inst.TaskState = structs.TaskBlockDeviceMapping
	inst.VolumeBuild = &structs.VolumeBuild{StartedAt: at, Eval: &structs.Evaluation{ID: "ev-" + id,
		TriggeredBy: structs.EvalTriggerCreate, Status: structs.EvalStatusPending, InstanceIDs: []string{id}}}
	e := &structs.InstanceCreateEntry{CreatedAt: at, RequestID: "req-" + id, Instances: []*structs.Instance{inst}}
	for _, bd := range devices {
		if bd.Source == "" {
			continue
		}
		e.Volumes = append(e.Volumes, &structs.Volume{ID: bd.VolumeID, ProjectID: "p1", SizeGB: 1, Status: structs.VolumeCreating,
			Host: "h1", MadeFor: &structs.VolumeMadeFor{InstanceID: id, DeleteOnTermination: bd.DeleteOnTermination}, CreatedAt: at})
	}
	return e
}

// made is a block device that makes a blank volume.
func made(id string, bootIndex int, deleteOnTermination bool) *structs.BlockDevice {
	return &structs.BlockDevice{VolumeID: id, AttachmentID: "a-" + id, BootIndex: bootIndex, Source: structs.BlockSourceBlank,
		SizeGB: 1, DeleteOnTermination: deleteOnTermination}
}

// storageReports is a storage host's report on a volume it made (or
// failed to make), at unix nanoseconds at.
func (b *bootFixture) storageReports(id, status string, at int64) {
	b.t.Helper()
	path := "/pool/" + id
	b.mustApply(structs.VolumeUpdateType, &structs.VolumeUpdateEntry{ID: id, Host: "h1", FromStatus: []string{structs.VolumeCreating},
		Status: status, ProviderLocation: &path, UpdatedAt: at})
}

func (b *bootFixture) evalOf(id string) *structs.Evaluation {
	b.t.Helper()
	ev, err := b.f.State().EvalByID(nil, id)
	if err != nil {
		b.t.Fatal(err)
	}
	return ev
}

// TestVolumeBuildReleasesOnceMade: the create makes the volumes and the
// instance waits in block_device_mapping without an evaluation; the
// report that leaves the last volume available attaches them all and
// commits the instance's evaluation.
func TestVolumeBuildReleasesOnceMade(t *testing.T) {
	b := taskFixture(t)
	b.putVolume(&structs.Volume{ID: "old", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h1", ProviderLocation: "/pool/old"})
	b.mustApply(structs.InstanceCreateType, buildCreate("w", 1e9, made("root", 0, true), made("data", -1, false),
		&structs.BlockDevice{VolumeID: "old", AttachmentID: "a-old", BootIndex: -1}))
	inst := b.inst("w")
	if inst.VolumeBuild == nil || inst.TaskState != structs.TaskBlockDeviceMapping || inst.AwaitsPlacement("ev-w") || b.evalOf("ev-w") != nil {
		t.Fatalf("a waiting instance: %+v (eval %+v)", inst, b.evalOf("ev-w"))
	}
	if v := b.volume("root"); v.Status != structs.VolumeCreating || v.MadeFor == nil || v.MadeFor.InstanceID != "w" {
		t.Fatalf("made volume: %+v", v)
	}
	if v := b.volume("old"); v.Status != structs.VolumeInUse {
		t.Fatalf("an existing volume is attached by the create: %+v", v)
	}
	b.storageReports("root", structs.VolumeAvailable, 2e9)
	if b.inst("w").VolumeBuild == nil || b.evalOf("ev-w") != nil {
		t.Fatal("released before every volume was made")
	}
	b.storageReports("data", structs.VolumeAvailable, 3e9)
	inst = b.inst("w")
	if inst.VolumeBuild != nil || inst.TaskState != structs.TaskScheduling || !inst.AwaitsPlacement("ev-w") {
		t.Fatalf("released instance: %+v", inst)
	}
	if ev := b.evalOf("ev-w"); ev == nil || ev.Status != structs.EvalStatusPending || len(ev.InstanceIDs) != 1 || ev.InstanceIDs[0] != "w" {
		t.Fatalf("released instance's eval: %+v", ev)
	}
	for id, dev := range map[string]string{"root": "/dev/vda", "old": "/dev/sdb", "data": "/dev/sdc"} {
		v := b.volume(id)
		if a := v.AttachmentOf("w"); v.Status != structs.VolumeInUse || a == nil || a.Device != dev || v.MadeFor != nil {
			t.Fatalf("%s after the release: %+v", id, v)
		}
	}
	if rv := b.inst("w").RootVolume(); rv.Path != "/pool/root" || rv.Device != "/dev/vda" {
		t.Fatalf("root block device: %+v", rv)
	}
}

// TestVolumeBuildFailsAsNova: a volume its storage host failed to make
// ends the build as Nova's build abort does (ERROR, its fault, the
// create action failed) and releases the volumes: detached, those with
// delete_on_termination deleted, one still being made deleted once it
// is reported; the rest are the project's.
func TestVolumeBuildFailsAsNova(t *testing.T) {
	b := taskFixture(t)
	b.putVolume(&structs.Volume{ID: "old", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h1", ProviderLocation: "/pool/old"})
	b.mustApply(structs.InstanceCreateType, buildCreate("f", 10e9, made("root", 0, true), made("late", -1, true), made("keep", -1, false),
		&structs.BlockDevice{VolumeID: "old", AttachmentID: "a-old", BootIndex: -1}))
	b.storageReports("keep", structs.VolumeAvailable, 11e9)
	b.storageReports("root", structs.VolumeError, 17e9)
	inst := b.inst("f")
	want := "Build of instance f aborted: Volume root did not finish being created even after we waited 7 seconds or 3 attempts. And its status is error."
	if inst.VMState != structs.VMStateError || inst.TaskState != "" || inst.VolumeBuild != nil || inst.Fault == nil ||
		inst.Fault.Message != want || inst.Fault.Code != 500 || len(inst.BlockDevices) != 0 {
		t.Fatalf("failed build: %+v (fault %+v)", inst, inst.Fault)
	}
	if b.evalOf("ev-f") != nil {
		t.Fatal("a failed build committed its eval")
	}
	acts, err := b.f.State().InstanceActions(nil, "f")
	if err != nil || len(acts) != 1 || len(acts[0].Events) == 0 || acts[0].Events[0].Result != structs.EventError {
		t.Fatalf("create action: %+v %v", acts, err)
	}
	for id, status := range map[string]string{"root": structs.VolumeDeleting, "keep": structs.VolumeAvailable,
		"old": structs.VolumeAvailable, "late": structs.VolumeCreating} {
		if v := b.volume(id); v.Status != status || len(v.Attachments) != 0 {
			t.Fatalf("%s after the failed build: %+v, want %s", id, v, status)
		}
	}
	if v := b.volume("keep"); v.MadeFor != nil {
		t.Fatalf("a kept volume is still tied to the build: %+v", v)
	}
	b.storageReports("late", structs.VolumeAvailable, 20e9)
	if v := b.volume("late"); v.Status != structs.VolumeDeleting || v.MadeFor != nil {
		t.Fatalf("a volume made after its build failed: %+v", v)
	}
	if inst := b.inst("f"); inst.VMState != structs.VMStateError || inst.Fault.Message != want {
		t.Fatalf("a late volume changed the failed instance: %+v", inst)
	}
	b.mustApply(structs.InstanceDeleteType, &structs.InstanceDeleteEntry{Purge: []string{"f"}})
	if b.inst("f") != nil || b.volume("keep").Status != structs.VolumeAvailable {
		t.Fatal("deleting the failed server")
	}
}

// TestVolumeBuildDeletedWhileWaiting: deleting a server whose volumes
// are being made deletes those with delete_on_termination once made.
func TestVolumeBuildDeletedWhileWaiting(t *testing.T) {
	b := taskFixture(t)
	b.mustApply(structs.InstanceCreateType, buildCreate("d", 1e9, made("gone", 0, true), made("kept", -1, false)))
	b.mustApply(structs.InstanceDeleteType, &structs.InstanceDeleteEntry{Deleting: []string{"d"}, UpdatedAt: 2e9})
	if b.inst("d") != nil {
		t.Fatal("an instance waiting for its volumes is deleted at once")
	}
	b.storageReports("gone", structs.VolumeAvailable, 3e9)
	b.storageReports("kept", structs.VolumeError, 3e9)
	if v := b.volume("gone"); v.Status != structs.VolumeDeleting {
		t.Fatalf("delete_on_termination volume of a deleted build: %+v", v)
	}
	if v := b.volume("kept"); v.Status != structs.VolumeError || v.MadeFor != nil {
		t.Fatalf("kept volume of a deleted build: %+v", v)
	}
}

// TestVolumeBuildTimeout: the leader's timeout ends a build still
// waiting Limit after it started, not one that started later nor one
// already released; a volume no host could take fails the create's
// build at once.
func TestVolumeBuildTimeout(t *testing.T) {
	b := taskFixture(t)
	b.mustApply(structs.InstanceCreateType, buildCreate("slow", 1e9, made("s1", 0, true)))
	b.mustApply(structs.InstanceCreateType, buildCreate("young", 50e9, made("y1", 0, true)))
	b.mustApply(structs.VolumeBuildTimeoutType, &structs.VolumeBuildTimeoutEntry{InstanceIDs: []string{"slow", "young"}, At: 61e9, Limit: 60e9})
	want := "Build of instance slow aborted: Volume s1 did not finish being created even after we waited 60 seconds or 21 attempts. And its status is creating."
	if inst := b.inst("slow"); inst.VMState != structs.VMStateError || inst.Fault == nil || inst.Fault.Message != want {
		t.Fatalf("timed out build: %+v", inst)
	}
	if inst := b.inst("young"); inst.VolumeBuild == nil || inst.VMState != structs.VMStateBuilding {
		t.Fatalf("a build within its limit was ended: %+v", inst)
	}
	b.storageReports("s1", structs.VolumeAvailable, 62e9)
	if v := b.volume("s1"); v.Status != structs.VolumeDeleting {
		t.Fatalf("volume of a timed out build: %+v", v)
	}
	builds, err := b.f.State().VolumeBuilds(nil)
	if err != nil || len(builds) != 1 || builds[0].ID != "young" {
		t.Fatalf("waiting builds: %v %v", builds, err)
	}

	e := buildCreate("nohost", 70e9, made("n1", 0, false))
	e.Volumes[0].Status, e.Volumes[0].Host, e.Volumes[0].ErrorMessage = structs.VolumeError, "", "No valid backend was found. No weighed backends available"
	b.mustApply(structs.InstanceCreateType, e)
	want = "Build of instance nohost aborted: Volume n1 did not finish being created even after we waited 0 seconds or 1 attempts. And its status is error."
	if inst := b.inst("nohost"); inst.VMState != structs.VMStateError || inst.Fault == nil || inst.Fault.Message != want {
		t.Fatalf("build of a volume no host took: %+v", inst)
	}
	if v := b.volume("n1"); v.Status != structs.VolumeError || v.MadeFor != nil {
		t.Fatalf("the volume no host took (not delete_on_termination): %+v", v)
	}
}

// TestVolumeBuildRefusesStrayVolumes: a create entry's volumes must be
// made for one of its waiting instances.
func TestVolumeBuildRefusesStrayVolumes(t *testing.T) {
	b := taskFixture(t)
	e := buildCreate("x", 1e9, made("x1", 0, true))
	e.Volumes[0].MadeFor.InstanceID = "other"
	if resp := b.apply(structs.InstanceCreateType, e); resp == nil {
		t.Fatal("a create with a volume made for no instance of it was applied")
	}
	if b.inst("x") != nil || b.volume("x1") != nil {
		t.Fatal("a refused create left something behind")
	}
}

// TestVolumeBuildSurvivesSnapshot: a build's wait is all in the state:
// a server restored from a snapshot (a new leader, a restarted one)
// releases it on the report that comes after.
func TestVolumeBuildSurvivesSnapshot(t *testing.T) {
	b := taskFixture(t)
	b.mustApply(structs.InstanceCreateType, buildCreate("s", 1e9, made("sr", 0, true)))
	snap, err := b.f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	restored := &bootFixture{t: t, f: testFSM(t), index: b.index}
	if err := restored.f.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if inst, v := restored.inst("s"), restored.volume("sr"); inst.VolumeBuild == nil || inst.VolumeBuild.Eval == nil ||
		v.MadeFor == nil || v.MadeFor.InstanceID != "s" || !v.MadeFor.DeleteOnTermination {
		t.Fatalf("restored build: %+v, volume %+v", inst, v)
	}
	restored.storageReports("sr", structs.VolumeAvailable, 2e9)
	if inst := restored.inst("s"); inst.VolumeBuild != nil || restored.evalOf("ev-s") == nil {
		t.Fatalf("restored build not released: %+v", inst)
	}
}
