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

// TestCreateReachesVolumesOfOtherHosts: an instance created unpinned
// with a root volume of a storage host that serves NBD exports and an
// RBD data volume is attached through the export and Ceph (the export
// served from the create on, Exported), and the attachments take the
// host the scheduler places it on; a volume of a storage host without
// NBD refuses an instance not pinned to that host.
func TestCreateReachesVolumesOfOtherHosts(t *testing.T) {
	b := taskFixture(t)
	hs := bootHost("hs")
	hs.Attributes = map[string]string{structs.HostAttrStorageNBDAddress: "10.0.0.9:10809"}
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: hs})
	for _, v := range []*structs.Volume{
		{ID: "root", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "hs", ProviderLocation: "/pool/root", Bootable: true},
		{ID: "rbd", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "hc", Backend: structs.VolumeBackendRBD, ProviderLocation: "volumes/volume-rbd"},
		{ID: "nonbd", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h2", ProviderLocation: "/pool/nonbd"},
	} {
		b.putVolume(v)
	}
	unpinned := func(id string, devices ...*structs.BlockDevice) *structs.Instance {
		inst := bfvInstance(id, devices...)
		inst.TargetHostID = ""
		return inst
	}
	resp := b.apply(structs.InstanceCreateType, &structs.InstanceCreateEntry{Instances: []*structs.Instance{unpinned("bad",
		&structs.BlockDevice{VolumeID: "nonbd", AttachmentID: "a-bad", BootIndex: 0})}})
	if err, ok := resp.(error); !ok || !strings.Contains(err.Error(), "serves no NBD exports") {
		t.Fatalf("unpinned create with a volume of a host without NBD: %v", resp)
	}
	b.mustApply(structs.InstanceCreateType, &structs.InstanceCreateEntry{CreatedAt: 50, Instances: []*structs.Instance{unpinned("bfv",
		&structs.BlockDevice{VolumeID: "root", AttachmentID: "a-root", BootIndex: 0},
		&structs.BlockDevice{VolumeID: "rbd", AttachmentID: "a-rbd", BootIndex: -1})}})
	inst := b.inst("bfv")
	rv := inst.RootVolume()
	if rv == nil || rv.Path != "" || rv.Device != "/dev/vda" || rv.NBD == nil ||
		*rv.NBD != (structs.VolumeExport{Name: structs.VolumeExportName("root", "a-root"), Address: "10.0.0.9:10809"}) {
		t.Fatalf("root volume: %+v", rv)
	}
	if bd := inst.BlockDevices[1]; bd.Path != "" || bd.NBD != nil || bd.RBD != "volumes/volume-rbd" || bd.Device != "/dev/sdb" {
		t.Fatalf("rbd volume: %+v", bd)
	}
	attachment := func(vol string) *structs.VolumeAttachment {
		v := b.volume(vol)
		if v.Status != structs.VolumeInUse || v.AttachmentOf("bfv") == nil {
			t.Fatalf("%s: %+v", vol, v)
		}
		return v.AttachmentOf("bfv")
	}
	if a := attachment("root"); a.Host != "" || !a.Exported {
		t.Fatalf("root's attachment before placement: %+v", a)
	}
	if a := attachment("rbd"); a.Host != "" || a.Exported {
		t.Fatalf("rbd's attachment before placement: %+v", a)
	}
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a-bfv", InstanceID: "bfv", HostID: "h2",
		Resources: b.alloc("a1").Resources, ClientState: structs.AllocClientPending}}})
	for _, vol := range []string{"root", "rbd"} {
		if a := attachment(vol); a.Host != "h2" {
			t.Fatalf("%s's attachment once placed on h2: %+v", vol, a)
		}
	}
	if a := attachment("root"); !a.Exported {
		t.Fatalf("root's attachment lost its export: %+v", a)
	}
}
