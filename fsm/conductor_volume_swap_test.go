package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// swapFixture is attachFixture with i1 booted from v-root and created
// with the data volume v-data (both files of h1, in-use), a storage host
// hs serving NBD, and available volumes on h1 and hs.
func swapFixture(t *testing.T) *bootFixture {
	b := attachFixture(t)
	hs := bootHost("hs")
	hs.Attributes = map[string]string{structs.HostAttrStorageNBDAddress: "10.0.0.9:10809"}
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: hs})
	for _, v := range []struct{ id, host, dev string }{{"v-root", "h1", "/dev/vda"}, {"v-data", "h1", "/dev/sdb"}} {
		b.putVolume(&structs.Volume{ID: v.id, ProjectID: "p1", SizeGB: 1, Status: structs.VolumeInUse, Host: v.host,
			ProviderLocation: "/pool/" + v.id, Attachments: []*structs.VolumeAttachment{{ID: "att-" + v.id, InstanceID: "i1",
				Host: "h1", Device: v.dev, Mode: "rw", AttachedAt: 1}}})
	}
	for _, v := range []struct{ id, host string }{{"v-local", "h1"}, {"v-far", "hs"}, {"v-far2", "hs"}} {
		b.putVolume(&structs.Volume{ID: v.id, ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: v.host,
			ProviderLocation: "/pool/" + v.id})
	}
	b.index++
	txn := b.f.State().writeTxn()
	defer txn.Abort()
	inst := b.inst("i1").Copy()
	inst.BlockDevices = []*structs.BlockDevice{
		{VolumeID: "v-root", AttachmentID: "att-v-root", BootIndex: 0, Path: "/pool/v-root", Device: "/dev/vda"},
		{VolumeID: "v-data", AttachmentID: "att-v-data", BootIndex: -1, Path: "/pool/v-data", Device: "/dev/sdb"}}
	if err := insertInstance(txn, inst); err != nil {
		t.Fatal(err)
	}
	if err := commitAt(txn, b.index, TableInstances); err != nil {
		t.Fatal(err)
	}
	return b
}

func withSwap(old, nv string) func(*structs.InstanceTaskEntry) {
	return func(e *structs.InstanceTaskEntry) {
		e.Volume = &structs.VolumeAttachRequest{VolumeID: old, NewVolumeID: nv, AttachmentID: "att-" + nv}
		e.Action.RequestID += "-" + old + "-" + nv
	}
}

// expectRefused checks that resp is an error of kind whose message is
// msg.
func expectRefused(t *testing.T, what string, resp any, kind structs.ErrorKind, msg string) {
	t.Helper()
	err, ok := resp.(error)
	if !ok || structs.KindOf(err) != kind || structs.Message(err) != msg {
		t.Fatalf("%s = %v, want %s %q", what, resp, kind, msg)
	}
}

// TestSwapVolumeOntoOtherStorage: a swap moves a data volume onto
// another host's NBD export (the agent gets the export of the new
// attachment; the volume leaves the block devices a spawn opens), the
// root volume onto a file of the instance's host (its block device then
// names the new volume) but not onto another host's volume, and Nova's
// refusals come in Nova's words: an old volume not attached to the
// instance, and one with more than one read/write attachment.
func TestSwapVolumeOntoOtherStorage(t *testing.T) {
	b := swapFixture(t)
	expectRefused(t, "swap of a volume not attached", b.task(structs.OpSwapVolume, withSwap("v-local", "v-far")),
		structs.KindInvalid, "Invalid volume: Old volume is attached to a different instance.")
	expectRefused(t, "root volume onto NBD", b.task(structs.OpSwapVolume, withSwap("v-root", "v-far")), structs.KindInvalid,
		"Invalid volume: volume v-root is the instance's root volume, which can be swapped only onto a volume kept as a file on the instance's host")
	if v := b.volume("v-far"); v.Status != structs.VolumeAvailable || len(v.Attachments) != 0 {
		t.Fatalf("a refused swap reserved the new volume: %+v", v)
	}

	if resp := b.task(structs.OpSwapVolume, withSwap("v-data", "v-far")); resp != nil {
		t.Fatalf("swap onto another host: %v", resp)
	}
	a := b.alloc("a1")
	arg, err := structs.ParseVolumeActionArg(a.ActionArg)
	want := structs.VolumeExport{Name: structs.VolumeExportName("v-far", "att-v-far"), Address: "10.0.0.9:10809"}
	if err != nil || arg.Path != "" || arg.NBD == nil || *arg.NBD != want || arg.FromVolumeID != "v-data" || arg.Device != "/dev/sdb" {
		t.Fatalf("action arg %q: %+v %v", a.ActionArg, arg, err)
	}
	if v := b.volume("v-far"); v.Status != structs.VolumeAttaching || v.AttachmentOf("i1") == nil || v.AttachmentOf("i1").Host != "h1" {
		t.Fatalf("the new volume while swapping: %+v", v)
	}
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, a.ActionSeq, "")
	if v := b.volume("v-far"); v.Status != structs.VolumeInUse {
		t.Fatalf("after the swap: %+v", v)
	}
	if v := b.volume("v-data"); v.Status != structs.VolumeAvailable || len(v.Attachments) != 0 {
		t.Fatalf("the old volume after the swap: %+v", v)
	}
	if bds := b.inst("i1").BlockDevices; len(bds) != 1 || bds[0].VolumeID != "v-root" {
		t.Fatalf("block devices after a swap onto NBD: %+v", bds)
	}

	if resp := b.task(structs.OpSwapVolume, withSwap("v-root", "v-local")); resp != nil {
		t.Fatalf("swap of the root volume: %v", resp)
	}
	a = b.alloc("a1")
	if arg, err := structs.ParseVolumeActionArg(a.ActionArg); err != nil || arg.Path != "/pool/v-local" || arg.NBD != nil || arg.Device != "/dev/vda" {
		t.Fatalf("root swap's action arg %q: %v", a.ActionArg, err)
	}
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, a.ActionSeq, "")
	bds := b.inst("i1").BlockDevices
	if len(bds) != 1 || bds[0].VolumeID != "v-local" || bds[0].Path != "/pool/v-local" || bds[0].BootIndex != 0 || bds[0].AttachmentID != "att-v-local" {
		t.Fatalf("block devices after the root swap: %+v", bds)
	}

	// A multiattach volume attached read/write elsewhere too.
	b.putVolume(&structs.Volume{ID: "v-multi", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeInUse, Host: "h1", Multiattach: true,
		ProviderLocation: "/pool/v-multi", Attachments: []*structs.VolumeAttachment{
			{ID: "att-m1", InstanceID: "i1", Host: "h1", Device: "/dev/sdc", Mode: "rw"},
			{ID: "att-m2", InstanceID: "i9", Host: "h1", Device: "/dev/sdb", Mode: "rw"}}})
	expectRefused(t, "swap of a multiattach volume", b.task(structs.OpSwapVolume, withSwap("v-multi", "v-far2")),
		structs.KindInvalid, "Swapping multi-attach volumes with more than one read/write attachment is not supported.")
	if b.volume("v-multi").Status != structs.VolumeInUse {
		t.Fatalf("a refused swap changed the old volume: %+v", b.volume("v-multi"))
	}
}

// TestComputeAttachmentUpdate: Nova 2.85's update sets the Compute API
// attachment's delete_on_termination, and a volume the instance has no
// such attachment to is Nova's VolumeBDMNotFound.
func TestComputeAttachmentUpdate(t *testing.T) {
	b := swapFixture(t)
	on := true
	b.mustApply(structs.ComputeAttachmentUpdateType, &structs.ComputeAttachmentUpdateEntry{VolumeID: "v-data", InstanceID: "i1", DeleteOnTermination: &on, At: 5})
	if att := b.volume("v-data").AttachmentOf("i1"); att == nil || !att.DeleteOnTermination {
		t.Fatalf("attachment after the update: %+v", att)
	}
	expectRefused(t, "update of a volume not attached", b.apply(structs.ComputeAttachmentUpdateType,
		&structs.ComputeAttachmentUpdateEntry{VolumeID: "v-local", InstanceID: "i1", DeleteOnTermination: &on}),
		structs.KindNotFound, "No volume Block Device Mapping with id v-local.")
}
