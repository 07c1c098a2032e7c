package fsm

import (
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// rootExport is the NBD export of i1's root volume v-root on hs.
var rootExport = structs.VolumeExport{Name: structs.VolumeExportName("v-root", "att-root"), Address: "10.0.0.9:10809"}

// bfvFixture is attachFixture with i1 (on h1) booted from v-root: kept
// on storage host hs and reached through hs's NBD export (nbd), or kept
// on h1 itself, whose NBD server is not configured, and reached as its
// file there (the pinned case).
func bfvFixture(t *testing.T, nbd bool) *bootFixture {
	b := attachFixture(t)
	hs := bootHost("hs")
	hs.Attributes = map[string]string{structs.HostAttrStorageNBDAddress: rootExport.Address}
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: hs})
	v := &structs.Volume{ID: "v-root", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeInUse, Host: "hs",
		ProviderLocation: "/pool/volume-v-root.qcow2", Bootable: true,
		Attachments: []*structs.VolumeAttachment{{ID: "att-root", InstanceID: "i1", Host: "h1", Exported: true, Device: "/dev/vda", Mode: "rw", AttachedAt: 1}}}
	bd := &structs.BlockDevice{VolumeID: "v-root", AttachmentID: "att-root", BootIndex: 0, Device: "/dev/vda", NBD: &rootExport}
	if !nbd {
		// Pinned: the root is h1's file, as a storage host without an
		// NBD server keeps it.
		v.Host, v.Attachments[0].Exported = "h1", false
		bd.NBD, bd.Path = nil, v.ProviderLocation
	}
	b.putVolume(v)
	b.index++
	txn := b.f.State().writeTxn()
	defer txn.Abort()
	inst := b.inst("i1").Copy()
	inst.BlockDevices = []*structs.BlockDevice{bd}
	if err := insertInstance(txn, inst); err != nil {
		t.Fatal(err)
	}
	if err := commitAt(txn, b.index, TableInstances); err != nil {
		t.Fatal(err)
	}
	return b
}

// rootIs checks where i1's root attachment is and how i1 reaches its
// root volume (the export, or the file when path).
func (b *bootFixture) rootIs(when, host, moveHost string, path bool) {
	b.t.Helper()
	v := b.volume("v-root")
	att := v.AttachmentOf("i1")
	if v.Status != structs.VolumeInUse || att == nil || att.Host != host || att.MoveHost != moveHost {
		b.t.Fatalf("%s: volume %s, attachment %+v; want host %q move host %q", when, v.Status, att, host, moveHost)
	}
	rv := b.inst("i1").RootVolume()
	switch {
	case rv == nil:
		b.t.Fatalf("%s: no root volume", when)
	case path && (rv.Path != v.ProviderLocation || rv.NBD != nil):
		b.t.Fatalf("%s: root %+v, want its file", when, rv)
	case !path && (rv.Path != "" || rv.NBD == nil || *rv.NBD != rootExport):
		b.t.Fatalf("%s: root %+v, want its export", when, rv)
	}
}

// placeOn places i1's move (evaluation eval) as allocation id on host
// and checks that the destination spawns from the root's export.
func (b *bootFixture) placeOn(id, host, eval string, res map[string]int64) {
	b.t.Helper()
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: id, InstanceID: "i1", HostID: host,
		EvalID: eval, Resources: res, ClientState: structs.AllocClientPending}}})
	vols := b.alloc(id).Volumes
	if len(vols) != 1 || vols[0].VolumeID != "v-root" || vols[0].AttachmentID != "att-root" || vols[0].Device != "/dev/vda" ||
		vols[0].Path != "" || vols[0].NBD == nil || *vols[0].NBD != rootExport {
		b.t.Fatalf("destination %s's volumes: %+v", id, vols)
	}
}

// TestVolumeBootedServerMigrates: a server booted from a volume of
// another host migrates cold: the destination spawns from the root's
// export, the attachment moves to it (kept on the source until the
// confirm), back on a revert, and the volume stays in use throughout.
func TestVolumeBootedServerMigrates(t *testing.T) {
	b := bfvFixture(t, true)
	for n, req := range []string{"req-m1", "req-m2"} {
		dest := []string{"a2", "a3"}[n]
		if resp := b.task(structs.OpMigrate, withMove, func(e *structs.InstanceTaskEntry) {
			e.Action.RequestID, e.Eval.ID = req, "e-"+req
		}); resp != nil {
			t.Fatalf("migrate: %v", resp)
		}
		b.placeOn(dest, "h2", "e-"+req, b.alloc("a1").Resources)
		b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, 0, "")
		b.rootIs("spawning", "h1", "h2", false)
		b.reportOn("h2", dest, structs.AllocClientRunning, structs.PowerRunning, 0, "")
		if i := b.inst("i1"); i.Status() != "VERIFY_RESIZE" || i.HostID != "h2" {
			t.Fatalf("verify: %s on %s", i.Status(), i.HostID)
		}
		b.rootIs("verify", "h2", "h1", false)
		if n == 1 {
			break
		}
		if resp := b.task(structs.OpRevertResize); resp != nil {
			t.Fatalf("revert: %v", resp)
		}
		b.rootIs("reverting", "h1", "", false)
		b.reportOn("h2", dest, structs.AllocClientDeleted, 0, 0, "")
		b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, 0, "")
		if i := b.inst("i1"); i.Status() != "ACTIVE" || i.HostID != "h1" {
			t.Fatalf("reverted: %s on %s", i.Status(), i.HostID)
		}
	}
	if resp := b.task(structs.OpConfirmResize); resp != nil {
		t.Fatalf("confirm: %v", resp)
	}
	b.rootIs("confirmed", "h2", "", false)
	if a := b.alloc("a1"); a.DesiredState != structs.AllocDesiredDeleted {
		t.Fatalf("source not torn down: %+v", a)
	}
	if v := b.volume("v-root"); v.Status != structs.VolumeInUse || len(v.Attachments) != 1 {
		t.Fatalf("root volume: %+v", v)
	}
}

// TestVolumeBootedServerResizes: a resize to another host moves the
// root attachment as a cold migration does.
func TestVolumeBootedServerResizes(t *testing.T) {
	b := bfvFixture(t, true)
	if resp := b.task(structs.OpResize, withMove, func(e *structs.InstanceTaskEntry) {
		e.NewFlavor = &structs.Flavor{ID: "f2", Name: "f2", VCPUs: 2, MemoryMB: 128}
	}); resp != nil {
		t.Fatalf("resize: %v", resp)
	}
	b.placeOn("a2", "h2", "e-move", b.alloc("a1").Resources)
	b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, 0, "")
	b.reportOn("h2", "a2", structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if i := b.inst("i1"); i.Status() != "VERIFY_RESIZE" || i.HostID != "h2" {
		t.Fatalf("verify: %s on %s", i.Status(), i.HostID)
	}
	b.rootIs("resized", "h2", "h1", false)
}

// TestVolumeBootedServerLiveMigrates: a live migration takes the root
// volume as shared storage: the destination is listed the export, and
// the attachment moves with the guest.
func TestVolumeBootedServerLiveMigrates(t *testing.T) {
	b := bfvFixture(t, true)
	h1 := b.host("h1").Copy()
	h1.Capabilities = append(h1.Capabilities, structs.HostCapabilityLiveMigrate)
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h1})
	if resp := b.task(structs.OpLiveMigrate, withMove); resp != nil {
		t.Fatalf("live migration: %v", resp)
	}
	b.placeOn("a2", "h2", "e-move", b.alloc("a1").Resources)
	b.rootIs("migrating", "h1", "h2", false)
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, b.alloc("a1").ActionSeq, "")
	b.reportOn("h2", "a2", structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if i := b.inst("i1"); i.Status() != "ACTIVE" || i.HostID != "h2" {
		t.Fatalf("live-migrated: %s on %s", i.Status(), i.HostID)
	}
	b.rootIs("live-migrated", "h2", "", false)
}

// TestVolumeBootedServerEvacuates: evacuating a server booted from a
// volume rebuilds it elsewhere on the volume.
func TestVolumeBootedServerEvacuates(t *testing.T) {
	b := bfvFixture(t, true)
	b.mustApply(structs.HostStatusUpdateType, &structs.HostStatusUpdateEntry{HostIDs: []string{"h1"}, Status: structs.HostStatusDown, UpdatedAt: 9})
	if resp := b.task(structs.OpEvacuate, withMove); resp != nil {
		t.Fatalf("evacuate: %v", resp)
	}
	b.placeOn("a2", "h2", "e-move", b.alloc("a1").Resources)
	b.reportOn("h2", "a2", structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if i := b.inst("i1"); i.Status() != "ACTIVE" || i.HostID != "h2" {
		t.Fatalf("evacuated: %s on %s", i.Status(), i.HostID)
	}
	b.rootIs("evacuated", "h2", "", false)
}

// TestVolumeBootedServerShelves: shelving and offloading keeps the root
// volume attached on no host; unshelving boots from it on the new host.
func TestVolumeBootedServerShelves(t *testing.T) {
	b := bfvFixture(t, true)
	res := b.alloc("a1").Resources
	if resp := b.task(structs.OpShelve, func(e *structs.InstanceTaskEntry) { e.Offload = true }); resp != nil {
		t.Fatalf("shelve: %v", resp)
	}
	b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, 0, "")
	b.reportOn("h1", "a1", structs.AllocClientDeleted, 0, 0, "")
	if i := b.inst("i1"); i.VMState != structs.VMStateShelvedOffloaded {
		t.Fatalf("shelve offload: %s", i.VMState)
	}
	b.rootIs("offloaded", "", "", false)
	if resp := b.task(structs.OpUnshelve, func(e *structs.InstanceTaskEntry) {
		e.Eval = &structs.Evaluation{ID: "e-unshelve", InstanceIDs: []string{"i1"}, Status: structs.EvalStatusPending}
	}); resp != nil {
		t.Fatalf("unshelve: %v", resp)
	}
	b.placeOn("a2", "h2", "e-unshelve", res)
	if a := b.alloc("a2"); a.RestoreImageID != "" {
		t.Fatalf("unshelve restores image %s", a.RestoreImageID)
	}
	b.reportOn("h2", "a2", structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if i := b.inst("i1"); i.Status() != "ACTIVE" || i.HostID != "h2" {
		t.Fatalf("unshelved: %s on %s", i.Status(), i.HostID)
	}
	b.rootIs("unshelved", "h2", "", false)
}

// TestVolumeBootedServerFileRoot: a root volume attached as its file on
// the instance's host (the storage host) follows a cold migration
// through its storage host's export once that host serves one, and is
// the file again after a revert; a live migration, which would carry
// the file as it is, is refused (409), and so is any move while the
// storage host serves no exports.
func TestVolumeBootedServerFileRoot(t *testing.T) {
	b := bfvFixture(t, false)
	for _, op := range []string{structs.OpMigrate, structs.OpResize, structs.OpShelve} {
		err, _ := b.task(op, withMove, func(e *structs.InstanceTaskEntry) { e.Action.RequestID += "-nonbd" }).(error)
		if structs.KindOf(err) != structs.KindConflict || !strings.Contains(err.Error(), "serves no NBD exports") {
			t.Fatalf("%s with a root volume of a host without NBD: %v", op, err)
		}
	}
	h1 := b.host("h1").Copy()
	h1.Capabilities = append(h1.Capabilities, structs.HostCapabilityLiveMigrate)
	h1.Attributes = map[string]string{structs.HostAttrStorageNBDAddress: "10.0.0.1:10809"}
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h1})
	err, _ := b.task(structs.OpLiveMigrate, withMove).(error)
	if structs.KindOf(err) != structs.KindConflict || !strings.Contains(err.Error(), "attached as a file") {
		t.Fatalf("live migration with a file root: %v", err)
	}
	b.rootIs("pinned", "h1", "", true)
	if resp := b.task(structs.OpMigrate, withMove); resp != nil {
		t.Fatalf("migrate: %v", resp)
	}
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a2", InstanceID: "i1", HostID: "h2",
		EvalID: "e-move", Resources: b.alloc("a1").Resources, ClientState: structs.AllocClientPending}}})
	export := structs.VolumeExport{Name: rootExport.Name, Address: "10.0.0.1:10809"}
	if vols := b.alloc("a2").Volumes; len(vols) != 1 || vols[0].NBD == nil || *vols[0].NBD != export {
		t.Fatalf("destination's volumes: %+v", vols)
	}
	b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, 0, "")
	b.reportOn("h2", "a2", structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if rv := b.inst("i1").RootVolume(); rv.Path != "" || rv.NBD == nil || *rv.NBD != export {
		t.Fatalf("root after the migration: %+v", rv)
	}
	if resp := b.task(structs.OpRevertResize); resp != nil {
		t.Fatalf("revert: %v", resp)
	}
	b.rootIs("reverting", "h1", "", true)
	if att := b.volume("v-root").AttachmentOf("i1"); att.Exported {
		t.Fatalf("reverted attachment still exported: %+v", att)
	}
}

// TestReimageOverTheNetwork: a 2.93 rebuild of a server whose root
// volume is reached through its storage host's export asks the agent to
// reimage it and records the new image on the volume; a root the
// instance reaches neither as a file of its host nor over the network
// is refused (409) with the server untouched.
func TestReimageOverTheNetwork(t *testing.T) {
	b := bfvFixture(t, true)
	rebuild := func(e *structs.InstanceTaskEntry) { e.ImageID, e.ReimageBootVolume = "img-2", true }
	if resp := b.task(structs.OpRebuild, rebuild); resp != nil {
		t.Fatalf("rebuild: %v", resp)
	}
	if a := b.alloc("a1"); a.PendingAction != structs.ActionRebuild || a.ActionArg != structs.ActionArgReimageBootVolume {
		t.Fatalf("allocation: %s %q", a.PendingAction, a.ActionArg)
	}
	if v := b.volume("v-root"); v.ImageID != "img-2" {
		t.Fatalf("volume's image: %q", v.ImageID)
	}

	b = bfvFixture(t, false)
	v := b.volume("v-root").Copy()
	v.Host = "hs" // its file is not on h1, and i1 does not reach it over NBD
	b.putVolume(v)
	err, _ := b.task(structs.OpRebuild, rebuild).(error)
	if structs.KindOf(err) != structs.KindConflict || !strings.Contains(err.Error(), "Cannot reimage volume v-root") {
		t.Fatalf("reimage of an unreachable root: %v", err)
	}
	if i := b.inst("i1"); i.Task != nil || i.Status() != "ACTIVE" {
		t.Fatalf("the refused rebuild changed the server: %s %+v", i.Status(), i.Task)
	}
}
