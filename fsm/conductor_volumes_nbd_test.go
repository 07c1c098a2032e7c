package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestAttachAcrossHostsOverNBD: a volume kept on another host than the
// instance's is attached through its storage host's NBD export of the
// attachment (the agent gets the export, not the file), once that host
// advertises an NBD server; the detach asks nothing of the export.
func TestAttachAcrossHostsOverNBD(t *testing.T) {
	b := attachFixture(t)
	hs := bootHost("hs")
	hs.Attributes = map[string]string{structs.HostAttrStorageNBDAddress: "10.0.0.9:10809"}
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: hs})
	b.putVolume(&structs.Volume{ID: "v-far", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "hs", ProviderLocation: "/pool/volume-v-far.qcow2"})

	if resp := b.task(structs.OpAttachVolume, withVolume("v-far", "")); resp != nil {
		t.Fatalf("attach across hosts: %v", resp)
	}
	v, a := b.volume("v-far"), b.alloc("a1")
	if v.Status != structs.VolumeAttaching || len(v.Attachments) != 1 || v.Attachments[0].Host != "h1" {
		t.Fatalf("attaching: %+v %+v", v, v.Attachments)
	}
	arg, err := structs.ParseVolumeActionArg(a.ActionArg)
	want := structs.VolumeExport{Name: structs.VolumeExportName("v-far", "att-v-far"), Address: "10.0.0.9:10809"}
	if err != nil || arg.Path != "" || arg.NBD == nil || *arg.NBD != want {
		t.Fatalf("action arg %q: %+v %v", a.ActionArg, arg, err)
	}
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, a.ActionSeq, "")
	if v := b.volume("v-far"); v.Status != structs.VolumeInUse {
		t.Fatalf("attached: %+v", v)
	}
	if resp := b.task(structs.OpDetachVolume, withVolume("v-far", "")); resp != nil {
		t.Fatalf("detach: %v", resp)
	}
	b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, b.alloc("a1").ActionSeq, "")
	if v := b.volume("v-far"); v.Status != structs.VolumeAvailable || len(v.Attachments) != 0 {
		t.Fatalf("detached: %+v", v)
	}
}
