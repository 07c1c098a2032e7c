package fsm

import (
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func bfvInstance(id string, devices ...*structs.BlockDevice) *structs.Instance {
	return &structs.Instance{ID: id, ProjectID: "p1", Name: id, FlavorID: "f1", Flavor: &structs.Flavor{ID: "f1", VCPUs: 1, MemoryMB: 64},
		VMState: structs.VMStateBuilding, TargetHostID: "h1", BlockDevices: devices}
}

// TestCreateAttachesBlockDevices: the entry that creates an instance
// with block devices attaches its volumes (the root one as /dev/vda,
// the others from sdb) and records their files on the instance; a
// volume taken, of another project or on another host refuses the
// whole create; deleting the instance releases them, deleting those
// with delete_on_termination.
func TestCreateAttachesBlockDevices(t *testing.T) {
	b := taskFixture(t)
	for _, v := range []*structs.Volume{
		{ID: "root", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h1", ProviderLocation: "/pool/root", Bootable: true},
		{ID: "data", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h1", ProviderLocation: "/pool/data"},
		{ID: "far", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h2", ProviderLocation: "/pool/far"},
		{ID: "theirs", ProjectID: "p2", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h1", ProviderLocation: "/pool/theirs"},
	} {
		b.putVolume(v)
	}
	refused := map[string]string{"far": "another host", "theirs": "failed to get volume theirs"}
	for vol, want := range refused {
		resp := b.apply(structs.InstanceCreateType, &structs.InstanceCreateEntry{Instances: []*structs.Instance{bfvInstance("bad-"+vol,
			&structs.BlockDevice{VolumeID: "data", AttachmentID: "a-data", BootIndex: -1},
			&structs.BlockDevice{VolumeID: vol, AttachmentID: "a-" + vol, BootIndex: 0})}})
		if err, ok := resp.(error); !ok || !strings.Contains(err.Error(), want) {
			t.Fatalf("create with %s: %v", vol, resp)
		}
		if b.inst("bad-"+vol) != nil || b.volume("data").Status != structs.VolumeAvailable {
			t.Fatalf("a refused create left the instance or the attachment behind")
		}
	}
	b.mustApply(structs.InstanceCreateType, &structs.InstanceCreateEntry{CreatedAt: 50, Instances: []*structs.Instance{bfvInstance("bfv",
		&structs.BlockDevice{VolumeID: "root", AttachmentID: "a-root", BootIndex: 0},
		&structs.BlockDevice{VolumeID: "data", AttachmentID: "a-data", BootIndex: -1, DeleteOnTermination: true})}})
	inst := b.inst("bfv")
	if rv := inst.RootVolume(); rv == nil || rv.Path != "/pool/root" || rv.Device != "/dev/vda" {
		t.Fatalf("root volume: %+v", rv)
	}
	if bd := inst.BlockDevices[1]; bd.Path != "/pool/data" || bd.Device != "/dev/sdb" {
		t.Fatalf("data volume: %+v", bd)
	}
	for id, dev := range map[string]string{"root": "/dev/vda", "data": "/dev/sdb"} {
		v := b.volume(id)
		if a := v.AttachmentOf("bfv"); v.Status != structs.VolumeInUse || a == nil || a.Device != dev || a.AttachedAt == 0 {
			t.Fatalf("%s: %+v", id, v)
		}
	}
	resp := b.apply(structs.InstanceCreateType, &structs.InstanceCreateEntry{Instances: []*structs.Instance{bfvInstance("again",
		&structs.BlockDevice{VolumeID: "root", AttachmentID: "a-again", BootIndex: 0})}})
	if err, ok := resp.(error); !ok || !strings.Contains(err.Error(), "the current status is in-use") {
		t.Fatalf("booting from a volume in use: %v", resp)
	}
	b.mustApply(structs.InstanceDeleteType, &structs.InstanceDeleteEntry{Purge: []string{"bfv"}})
	if v := b.volume("root"); v.Status != structs.VolumeAvailable || len(v.Attachments) != 0 {
		t.Fatalf("root after the delete: %+v", v)
	}
	if v := b.volume("data"); v.Status != structs.VolumeDeleting {
		t.Fatalf("data (delete_on_termination) after the delete: %+v", v)
	}
}
