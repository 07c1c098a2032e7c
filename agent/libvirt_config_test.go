package agent

import (
	"io"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestLibvirtDriverConfig: the client block selects the libvirt driver
// and configures it; bad values are refused by Finalize; simulated hosts
// stay fake.
func TestLibvirtDriverConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := dir + "/agent.hcl"
	writeFile(t, path, `
name = "hv1"
data_dir = "`+dir+`"
client {
  enabled = true
  driver  = "libvirt"
  libvirt {
    uri                 = "qemu+unix:///system?socket=/nonexistent/libvirt-sock"
    vnc_listen          = "0.0.0.0"
    images_dir          = "`+dir+`/images"
    virt_type           = "qemu"
    migration_uri       = "qemu+tcp://10.0.0.12/system"
    soft_reboot_timeout = "30s"
  }
}
`)
	c, err := LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	lc := c.Client.Libvirt
	if c.Client.Driver != "libvirt" || lc == nil || lc.VNCListen != "0.0.0.0" || lc.VirtType != "qemu" || lc.SoftRebootTimeout != "30s" {
		t.Fatalf("parsed %+v %+v", c.Client, lc)
	}
	// The driver does not wait for libvirtd: it is built at once.
	drv, err := newDriver(c.Client, "hv1", dir, false, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if drv.Name() != "libvirt" || !drv.Capabilities().LiveMigrate {
		t.Fatalf("driver %s caps %+v", drv.Name(), drv.Capabilities())
	}
	if err := drv.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	sim, err := newDriver(c.Client, "hv1-sim-001", t.TempDir(), true, hclog.NewNullLogger())
	if err != nil || sim.Name() != "fake" {
		t.Fatalf("simulated host driver %v, %v; want fake", sim, err)
	}

	for _, bad := range []struct{ driver, timeout, want string }{
		{"hyperv", "", `virt driver "hyperv" is not available`},
		{"libvirt", "soon", "soft_reboot_timeout"},
	} {
		c := &Config{NodeName: "x", DataDir: dir, Client: &ClientConfig{Enabled: true, Driver: bad.driver,
			Libvirt: &LibvirtConfig{SoftRebootTimeout: bad.timeout}}}
		if err := c.Finalize(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("driver %q timeout %q: Finalize = %v, want %q", bad.driver, bad.timeout, err, bad.want)
		}
	}
	// A bad libvirt setting fails when the driver is built.
	c.Client.Libvirt.ImagesDir = "relative/images"
	if _, err := newDriver(c.Client, "hv1", dir, false, hclog.NewNullLogger()); err == nil {
		t.Error("relative images_dir accepted")
	}
}
