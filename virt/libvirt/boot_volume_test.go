package libvirt

import (
	"os"
	"path/filepath"
	"testing"

	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
)

// TestBootVolumeIsTheRootDisk: a spawn's root volume becomes the
// domain's first disk (vda, the volume's format, its id as serial) in
// place of a disk of its own, and its data volumes SCSI disks from sdb.
func TestBootVolumeIsTheRootDisk(t *testing.T) {
	dir := t.TempDir()
	root, data := filepath.Join(dir, "root.raw"), filepath.Join(dir, "data.qcow2")
	if err := os.WriteFile(root, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, append(append([]byte{}, qcow2Magic...), make([]byte, 512)...), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := &virt.InstanceSpec{ID: "i1", VCPUs: 1, MemoryMB: 64,
		RootVolume: &virt.Volume{ID: "4c1d8a43-5a4e-4bd3-9a57-0bfa2f1e2a10", Path: root, Device: "/dev/vda"},
		Volumes:    []virt.Volume{{ID: "data", Path: data, Device: "/dev/sdb"}}}
	m := &instanceMeta{ID: "i1"}
	if err := bootVolumes(m, spec); err != nil {
		t.Fatal(err)
	}
	d := &Driver{}
	doc, err := d.domainXML(m, "qemu", "x86_64")
	if err != nil {
		t.Fatal(err)
	}
	var x libvirtxml.Domain
	if err := x.Unmarshal(doc); err != nil {
		t.Fatal(err)
	}
	disks := x.Devices.Disks
	if len(disks) != 2 {
		t.Fatalf("disks: %+v", disks)
	}
	if d0 := disks[0]; d0.Target.Dev != "vda" || d0.Source.File.File != root || d0.Driver.Type != "raw" || d0.Serial != "4c1d8a43-5a4e-4bd3-9" {
		t.Fatalf("root disk: %+v %+v %+v %s", d0.Target, d0.Source.File, d0.Driver, d0.Serial)
	}
	if d1 := disks[1]; d1.Target.Dev != "sdb" || d1.Target.Bus != "scsi" || d1.Source.File.File != data || d1.Driver.Type != "qcow2" {
		t.Fatalf("data disk: %+v %+v %+v", d1.Target, d1.Source.File, d1.Driver)
	}
	if len(x.Devices.Controllers) != 1 || x.Devices.Controllers[0].Model != "virtio-scsi" {
		t.Fatalf("controllers: %+v", x.Devices.Controllers)
	}
	spec.RootVolume.Path = filepath.Join(dir, "missing")
	if err := bootVolumes(&instanceMeta{ID: "i1"}, spec); err == nil {
		t.Fatal("a root volume without its file spawned")
	}
}
