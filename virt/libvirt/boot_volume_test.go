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

// TestBootVolumeOverTheNetwork: a root volume of another host is the
// domain's first disk (vda, raw to QEMU) as a network disk: the storage
// host's NBD export with TLS, or an RBD image with its cephx user and
// libvirt secret; no file is looked for.
func TestBootVolumeOverTheNetwork(t *testing.T) {
	for _, tc := range []struct {
		name string
		net  *virt.NetworkDisk
		want func(*libvirtxml.DomainDiskSourceNetwork) bool
	}{
		{"nbd", &virt.NetworkDisk{Protocol: virt.NetworkNBD, Name: "volume-r-a", Hosts: []string{"10.0.0.9:10809"}, TLS: true},
			func(n *libvirtxml.DomainDiskSourceNetwork) bool {
				return n.Protocol == "nbd" && n.Name == "volume-r-a" && n.TLS == "yes" && len(n.Hosts) == 1 &&
					n.Hosts[0].Name == "10.0.0.9" && n.Hosts[0].Port == "10809" && n.Auth == nil
			}},
		{"rbd", &virt.NetworkDisk{Protocol: virt.NetworkRBD, Name: "volumes/volume-r", Hosts: []string{"127.0.0.1:6789"},
			User: "cinder", SecretUUID: "457eb676-33da-42ec-9a8c-9293d545c337"},
			func(n *libvirtxml.DomainDiskSourceNetwork) bool {
				return n.Protocol == "rbd" && n.Name == "volumes/volume-r" && n.Auth != nil && n.Auth.Username == "cinder" &&
					n.Auth.Secret != nil && n.Auth.Secret.UUID == "457eb676-33da-42ec-9a8c-9293d545c337"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &virt.InstanceSpec{ID: "i1", VCPUs: 1, MemoryMB: 64,
				RootVolume: &virt.Volume{ID: "r", Device: "/dev/vda", Network: tc.net}}
			m := &instanceMeta{ID: "i1"}
			if err := bootVolumes(m, spec); err != nil {
				t.Fatal(err)
			}
			doc, err := (&Driver{}).domainXML(m, "qemu", "x86_64")
			if err != nil {
				t.Fatal(err)
			}
			var x libvirtxml.Domain
			if err := x.Unmarshal(doc); err != nil {
				t.Fatal(err)
			}
			if len(x.Devices.Disks) != 1 {
				t.Fatalf("disks: %+v", x.Devices.Disks)
			}
			d0 := x.Devices.Disks[0]
			if d0.Target.Dev != "vda" || d0.Target.Bus != "virtio" || d0.Driver.Type != "raw" || d0.Source.Network == nil || !tc.want(d0.Source.Network) {
				t.Fatalf("root disk: %+v %+v %+v", d0.Target, d0.Driver, d0.Source.Network)
			}
			if len(x.OS.BootDevices) != 1 || x.OS.BootDevices[0].Dev != "hd" {
				t.Fatalf("boot: %+v", x.OS.BootDevices)
			}
		})
	}
}
