package fsm

import (
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// moveFixture is attachFixture with a storage host hs and the
// destination h2 both serving NBD exports, and i1 on h1 with two
// volumes attached: v-far kept on hs, v-dst kept on h2.
func moveFixture(t *testing.T) *bootFixture {
	b := attachFixture(t)
	hs := bootHost("hs")
	hs.Attributes = map[string]string{structs.HostAttrStorageNBDAddress: "10.0.0.9:10809"}
	h2 := bootHost("h2")
	h2.Capabilities = []string{structs.HostCapabilityLiveMigrate, structs.HostCapabilityPause}
	h2.Attributes = map[string]string{structs.HostAttrStorageNBDAddress: "10.0.0.2:10809"}
	for _, h := range []*structs.Host{hs, h2} {
		b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h})
	}
	for _, v := range []*structs.Volume{
		{ID: "v-far", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "hs", ProviderLocation: "/pool/volume-v-far.qcow2"},
		{ID: "v-dst", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h2", ProviderLocation: "/pool/volume-v-dst.qcow2"},
	} {
		b.putVolume(v)
		if resp := b.task(structs.OpAttachVolume, withVolume(v.ID, "")); resp != nil {
			t.Fatalf("attach %s: %v", v.ID, resp)
		}
		b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, b.alloc("a1").ActionSeq, "")
	}
	return b
}

// attachmentsAre checks where i1's attachments are, and that both
// volumes stayed in use.
func (b *bootFixture) attachmentsAre(when, host, moveHost string) {
	b.t.Helper()
	for _, id := range []string{"v-far", "v-dst"} {
		v := b.volume(id)
		att := v.AttachmentOf("i1")
		if v.Status != structs.VolumeInUse || att == nil || att.Host != host || att.MoveHost != moveHost {
			b.t.Fatalf("%s: volume %s %s, attachment %+v; want host %q move host %q", when, id, v.Status, att, host, moveHost)
		}
	}
}

// exportedAre checks how the hosts of v-dst's attachment reach it (its
// storage host is h2): through the export or the file.
func (b *bootFixture) exportedAre(when string, exported, moveExported bool) {
	b.t.Helper()
	if att := b.volume("v-dst").AttachmentOf("i1"); att.Exported != exported || att.MoveExported != moveExported {
		b.t.Fatalf("%s: attachment %+v; want exported %v, move exported %v", when, att, exported, moveExported)
	}
}

// migrateTo drives a cold migration of i1 to h2 until VERIFY_RESIZE,
// checking the destination's volumes.
func (b *bootFixture) migrateTo(dest, req string) {
	b.t.Helper()
	if resp := b.task(structs.OpMigrate, withMove, func(e *structs.InstanceTaskEntry) {
		e.Action.RequestID, e.Eval.ID = req, "e-"+req
	}); resp != nil {
		b.t.Fatalf("migrate: %v", resp)
	}
	b.attachmentsAre("scheduling", "h1", "")
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: dest, InstanceID: "i1", HostID: "h2",
		EvalID: "e-" + req, Resources: b.alloc("a1").Resources, ClientState: structs.AllocClientPending}}})
	want := []structs.VolumeActionArg{
		{VolumeID: "v-far", AttachmentID: "att-v-far", Device: "/dev/sdb",
			NBD: &structs.VolumeExport{Name: structs.VolumeExportName("v-far", "att-v-far"), Address: "10.0.0.9:10809"}},
		// On its storage host too, the destination attaches the export.
		{VolumeID: "v-dst", AttachmentID: "att-v-dst", Device: "/dev/sdc",
			NBD: &structs.VolumeExport{Name: structs.VolumeExportName("v-dst", "att-v-dst"), Address: "10.0.0.2:10809"}},
	}
	got := b.alloc(dest).Volumes
	if len(got) != len(want) {
		b.t.Fatalf("destination volumes %+v", got)
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || (g.VolumeID == w.VolumeID && g.String() == w.String())
		}
		if !found {
			b.t.Fatalf("destination volumes %+v lack %+v", got, w)
		}
	}
	// The storage hosts serve the destination once the source is off
	// and it is released to spawn.
	b.attachmentsAre("placed", "h1", "")
	b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, 0, "")
	b.attachmentsAre("spawning", "h1", "h2")
	b.exportedAre("spawning", false, true)
	b.reportOn("h2", dest, structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if i := b.inst("i1"); i.Status() != "VERIFY_RESIZE" || i.HostID != "h2" {
		b.t.Fatalf("verify: %s on %s", i.Status(), i.HostID)
	}
}

// TestColdMigrateMovesAttachments: a server with volumes attached
// migrates; the destination spawns with every volume (its own file, the
// other host's export), the attachments move to it when the move
// finishes, back on a revert, and stay there on a confirm; the
// volumes are in use throughout.
func TestColdMigrateMovesAttachments(t *testing.T) {
	b := moveFixture(t)
	// v-far counts as a data volume i1 was created with.
	b.index++
	txn := b.f.State().writeTxn()
	defer txn.Abort()
	inst := b.inst("i1").Copy()
	inst.BlockDevices = []*structs.BlockDevice{{VolumeID: "v-far", AttachmentID: "att-v-far", BootIndex: -1, Path: "/pool/volume-v-far.qcow2", Device: "/dev/sdb"}}
	if err := insertInstance(txn, inst); err != nil {
		t.Fatal(err)
	}
	if err := commitAt(txn, b.index, TableInstances); err != nil {
		t.Fatal(err)
	}
	b.migrateTo("a2", "req-m1")
	// Its path was h1's: on the new host it is an attachment like any.
	if bds := b.inst("i1").BlockDevices; len(bds) != 0 {
		t.Fatalf("block devices after the move: %+v", bds)
	}
	// Both hosts may still run it until the resize is confirmed or
	// reverted.
	b.attachmentsAre("verify", "h2", "h1")
	b.exportedAre("verify", true, false)

	if resp := b.task(structs.OpRevertResize); resp != nil {
		t.Fatalf("revert: %v", resp)
	}
	// Back to the source as the revert starts: h2 no longer serves the
	// export the destination on it used.
	b.attachmentsAre("reverting", "h1", "")
	b.exportedAre("reverting", false, false)
	b.reportOn("h2", "a2", structs.AllocClientDeleted, 0, 0, "")
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if i := b.inst("i1"); i.Status() != "ACTIVE" || i.HostID != "h1" {
		t.Fatalf("reverted: %s on %s", i.Status(), i.HostID)
	}
	b.attachmentsAre("reverted", "h1", "")

	b.migrateTo("a3", "req-m2")
	if resp := b.task(structs.OpConfirmResize); resp != nil {
		t.Fatalf("confirm: %v", resp)
	}
	b.attachmentsAre("confirmed", "h2", "")
	b.exportedAre("confirmed", true, false)
	if a := b.alloc("a1"); a.DesiredState != structs.AllocDesiredDeleted {
		t.Fatalf("source not torn down: %+v", a)
	}
}

// TestFailedMoveKeepsAttachments: a destination that fails to spawn
// (it could not attach a volume) ends the move with the attachments on
// the source, no longer served to the destination.
func TestFailedMoveKeepsAttachments(t *testing.T) {
	b := moveFixture(t)
	if resp := b.task(structs.OpMigrate, withMove); resp != nil {
		t.Fatalf("migrate: %v", resp)
	}
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a2", InstanceID: "i1", HostID: "h2",
		EvalID: "e-move", Resources: b.alloc("a1").Resources, ClientState: structs.AllocClientPending}}})
	b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, 0, "")
	b.reportOn("h2", "a2", structs.AllocClientFailed, 0, 0, "")
	if i := b.inst("i1"); i.HostID != "h1" || i.Task != nil {
		t.Fatalf("after the failed move: %s on %s, task %+v", i.Status(), i.HostID, i.Task)
	}
	b.attachmentsAre("failed", "h1", "")
	b.exportedAre("failed", false, false)
}

// TestShelveOffloadKeepsAttachments: shelving and offloading keeps the
// volumes attached (in use, on no host), and unshelving spawns the
// instance with them on its new host.
func TestShelveOffloadKeepsAttachments(t *testing.T) {
	b := moveFixture(t)
	res := b.alloc("a1").Resources
	if resp := b.task(structs.OpShelve, func(e *structs.InstanceTaskEntry) { e.Offload = true }); resp != nil {
		t.Fatalf("shelve: %v", resp)
	}
	b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, 0, "")
	b.reportOn("h1", "a1", structs.AllocClientDeleted, 0, 0, "")
	if i := b.inst("i1"); i.VMState != structs.VMStateShelvedOffloaded {
		t.Fatalf("shelve offload: %s", i.VMState)
	}
	b.attachmentsAre("offloaded", "", "")

	if resp := b.task(structs.OpUnshelve, func(e *structs.InstanceTaskEntry) {
		e.Eval = &structs.Evaluation{ID: "e-unshelve", InstanceIDs: []string{"i1"}, Status: structs.EvalStatusPending}
	}); resp != nil {
		t.Fatalf("unshelve: %v", resp)
	}
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a2", InstanceID: "i1", HostID: "h2",
		EvalID: "e-unshelve", Resources: res, ClientState: structs.AllocClientPending}}})
	if vols := b.alloc("a2").Volumes; len(vols) != 2 {
		t.Fatalf("unshelve destination volumes %+v", vols)
	}
	b.attachmentsAre("unshelving", "", "h2")
	b.exportedAre("unshelving", false, true)
	b.reportOn("h2", "a2", structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if i := b.inst("i1"); i.Status() != "ACTIVE" || i.HostID != "h2" {
		t.Fatalf("unshelved: %s on %s", i.Status(), i.HostID)
	}
	b.attachmentsAre("unshelved", "h2", "")
	b.exportedAre("unshelved", true, false)
}

// TestMovesStillRefused: a volume whose storage host serves no exports
// keeps the server where it is (409).
func TestMovesStillRefused(t *testing.T) {
	b := moveFixture(t)
	b.putVolume(&structs.Volume{ID: "v-local", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h1", ProviderLocation: "/pool/volume-v-local.qcow2"})
	if resp := b.task(structs.OpAttachVolume, withVolume("v-local", "")); resp != nil {
		t.Fatalf("attach v-local: %v", resp)
	}
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, b.alloc("a1").ActionSeq, "")
	for _, op := range []string{structs.OpMigrate, structs.OpShelve, structs.OpResize} {
		if err, _ := b.task(op, withMove, func(e *structs.InstanceTaskEntry) { e.Action.RequestID += "-local" }).(error); structs.KindOf(err) != structs.KindConflict {
			t.Fatalf("%s with a volume of a host without NBD: %v", op, err)
		}
	}
}

// TestLiveMigrationWithVolumes: a server whose volumes are all reached
// through exports live-migrates with them, and the
// attachments move to the destination when the guest is there; one with
// a volume attached as its storage host's file is refused (409).
func TestLiveMigrationWithVolumes(t *testing.T) {
	b := moveFixture(t)
	h1 := b.host("h1").Copy()
	h1.Capabilities = append(h1.Capabilities, structs.HostCapabilityLiveMigrate)
	h1.Attributes = map[string]string{structs.HostAttrStorageNBDAddress: "10.0.0.1:10809"}
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h1})
	if resp := b.task(structs.OpLiveMigrate, withMove); resp != nil {
		t.Fatalf("live migration: %v", resp)
	}
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a2", InstanceID: "i1", HostID: "h2",
		EvalID: "e-move", Resources: b.alloc("a1").Resources, ClientState: structs.AllocClientPending}}})
	// The guest comes with its disks; a destination that finds no
	// guest spawns it with the exports.
	if a2 := b.alloc("a2"); len(a2.Volumes) != 2 || a2.Volumes[0].NBD == nil {
		t.Fatalf("live destination's volumes: %+v", a2.Volumes)
	}
	b.attachmentsAre("migrating", "h1", "h2")
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, b.alloc("a1").ActionSeq, "")
	b.reportOn("h2", "a2", structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if i := b.inst("i1"); i.Status() != "ACTIVE" || i.HostID != "h2" {
		t.Fatalf("live-migrated: %s on %s", i.Status(), i.HostID)
	}
	b.attachmentsAre("live-migrated", "h2", "")
	b.exportedAre("live-migrated", true, false)

	// On h2, a volume of h2 attached as its file.
	b.putVolume(&structs.Volume{ID: "v-local", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h2", ProviderLocation: "/pool/volume-v-local.qcow2"})
	if resp := b.task(structs.OpAttachVolume, withVolume("v-local", "")); resp != nil {
		t.Fatalf("attach v-local: %v", resp)
	}
	b.reportOn("h2", "a2", structs.AllocClientRunning, structs.PowerRunning, b.alloc("a2").ActionSeq, "")
	if v := b.volume("v-local"); v.AttachmentOf("i1").Exported || v.Status != structs.VolumeInUse {
		t.Fatalf("v-local: %+v", v)
	}
	err, _ := b.task(structs.OpLiveMigrate, withMove, func(e *structs.InstanceTaskEntry) { e.Action.RequestID += "-2" }).(error)
	if structs.KindOf(err) != structs.KindConflict || !strings.Contains(err.Error(), "attached as a file") {
		t.Fatalf("live migration with a file volume: %v", err)
	}
}

// TestEvacuateMovesAttachments: evacuating a server of a down host
// spawns it elsewhere with its volumes, whose attachments move there
// when it runs.
func TestEvacuateMovesAttachments(t *testing.T) {
	b := moveFixture(t)
	b.mustApply(structs.HostStatusUpdateType, &structs.HostStatusUpdateEntry{HostIDs: []string{"h1"}, Status: structs.HostStatusDown, UpdatedAt: 9})
	if resp := b.task(structs.OpEvacuate, withMove); resp != nil {
		t.Fatalf("evacuate: %v", resp)
	}
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a2", InstanceID: "i1", HostID: "h2",
		EvalID: "e-move", Resources: b.alloc("a1").Resources, ClientState: structs.AllocClientPending}}})
	if vols := b.alloc("a2").Volumes; len(vols) != 2 {
		t.Fatalf("evacuation's destination volumes %+v", vols)
	}
	b.attachmentsAre("evacuating", "h1", "h2")
	b.reportOn("h2", "a2", structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if i := b.inst("i1"); i.Status() != "ACTIVE" || i.HostID != "h2" {
		t.Fatalf("evacuated: %s on %s", i.Status(), i.HostID)
	}
	b.attachmentsAre("evacuated", "h2", "")
}

// TestRBDVolumeFollowsAMove: an RBD volume needs no NBD export to follow
// its server (every host opens it through Ceph): a storage host without
// nbd_address does not hold the server back, and the destination spawns
// with the volume's RBD image.
func TestRBDVolumeFollowsAMove(t *testing.T) {
	b := attachFixture(t)
	h2 := bootHost("h2")
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h2})
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: bootHost("hc")})
	b.putVolume(&structs.Volume{ID: "v-rbd", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "hc",
		Backend: structs.VolumeBackendRBD, ProviderLocation: "volumes/volume-v-rbd"})
	if resp := b.task(structs.OpAttachVolume, withVolume("v-rbd", "")); resp != nil {
		t.Fatalf("attach: %v", resp)
	}
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, b.alloc("a1").ActionSeq, "")
	if resp := b.task(structs.OpMigrate, withMove, func(e *structs.InstanceTaskEntry) { e.Action.RequestID, e.Eval.ID = "req-r", "e-req-r" }); resp != nil {
		t.Fatalf("migrate: %v", resp)
	}
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a2", InstanceID: "i1", HostID: "h2",
		EvalID: "e-req-r", Resources: b.alloc("a1").Resources, ClientState: structs.AllocClientPending}}})
	got := b.alloc("a2").Volumes
	if len(got) != 1 || got[0].RBD != "volumes/volume-v-rbd" || got[0].NBD != nil || got[0].Path != "" {
		t.Fatalf("destination volumes %+v", got)
	}
}
