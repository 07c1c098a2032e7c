package libvirt_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/virt/configdrive"
)

// TestConfigDriveIsAttachedAsCDROM spawns a real domain with a config
// drive: the image is a volume of the pool, attached read-only as a
// CD-ROM, holds the bytes given, carries the config-2 label, and goes
// with the instance.
func TestConfigDriveIsAttachedAsCDROM(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	img, err := configdrive.Build(map[string][]byte{
		"openstack/latest/meta_data.json": []byte(`{"uuid":"cd"}`),
		"openstack/latest/user_data":      []byte("#cloud-config\n"),
	}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	spec := tinySpec("cd")
	spec.ConfigDrive = img
	if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	name := e.drv.DomainName("cd")
	x := domainXML(t, e.raw, name, 0)
	var path string
	for _, d := range x.Devices.Disks {
		if d.Device != "cdrom" {
			continue
		}
		if d.ReadOnly == nil || d.Source == nil || d.Source.File == nil || d.Target == nil {
			t.Fatalf("config drive disk %+v is not a read-only file", d)
		}
		path = d.Source.File.File
	}
	if !strings.HasSuffix(path, "-disk.config") {
		t.Fatalf("no config drive CD-ROM among the disks %+v", x.Devices.Disks)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, img) {
		t.Fatalf("the config drive volume holds %d bytes, not the %d given", len(got), len(img))
	}
	if isoinfo, err := exec.LookPath("isoinfo"); err == nil {
		out, err := exec.Command(isoinfo, "-d", "-i", path).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Volume id: config-2") {
			t.Errorf("isoinfo -d: %v\n%s", err, out)
		}
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("isoinfo is required under CI=true: %v", err)
	}
	if err := e.drv.Destroy(ctx(t), "cd"); err != nil {
		t.Fatal(err)
	}
	if instanceVolume(t, e.raw, e.drv.PoolName(), name+"-disk.config") != "" {
		t.Fatal("the config drive volume outlived its instance")
	}
}
