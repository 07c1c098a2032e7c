package libvirt_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// volumeTargets lists a domain's disks on the volume (SCSI) bus: target
// dev → source file.
func volumeTargets(x *libvirtxml.Domain) map[string]string {
	out := map[string]string{}
	for _, d := range x.Devices.Disks {
		if d.Target != nil && d.Target.Bus == "scsi" && d.Source != nil && d.Source.File != nil {
			out[d.Target.Dev] = d.Source.File.File
		}
	}
	return out
}

// TestAttachDetachVolume hot-plugs a qcow2 volume into a running QEMU
// guest, sees it in the live and persistent XML and the metadata, keeps
// it across a stop/start and an agent restart, refuses bad requests
// clearly, and detaches it again.
func TestAttachDetachVolume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if !e.drv.Capabilities().AttachVolume {
		t.Fatal("AttachVolume capability off")
	}
	if _, err := e.drv.Spawn(ctx(t), tinySpec("v")); err != nil {
		t.Fatal(err)
	}
	name := e.drv.DomainName("v")
	vol := qcow2Image(t, "16M")

	if err := e.drv.AttachVolume(ctx(t), "v", &virt.Volume{ID: "vol-1", Path: vol, Device: "/dev/vdb"}); err != nil {
		t.Fatalf("AttachVolume: %v", err)
	}
	live := volumeTargets(domainXML(t, e.raw, name, 0))
	if live["sda"] != vol {
		t.Fatalf("live volume disks %v, want sda → %s", live, vol)
	}
	if cfg := volumeTargets(domainXML(t, e.raw, name, golibvirt.DomainXMLInactive)); cfg["sda"] != vol {
		t.Fatalf("persistent volume disks %v", cfg)
	}
	// Idempotent.
	if err := e.drv.AttachVolume(ctx(t), "v", &virt.Volume{ID: "vol-1", Path: vol}); err != nil {
		t.Errorf("attaching the same volume again = %v", err)
	}

	// Clear errors.
	vol2 := qcow2Image(t, "8M")
	cases := []struct {
		name string
		vol  *virt.Volume
		want error
	}{
		{"device in use", &virt.Volume{ID: "vol-2", Path: vol2, Device: "/dev/sda"}, libvirt.ErrDeviceInUse},
		{"root device in use", &virt.Volume{ID: "vol-2", Path: vol2, Device: "vda"}, libvirt.ErrDeviceInUse},
		{"missing path", &virt.Volume{ID: "vol-3", Path: filepath.Join(t.TempDir(), "nope.qcow2")}, os.ErrNotExist},
	}
	for _, c := range cases {
		if err := e.drv.AttachVolume(ctx(t), "v", c.vol); !errors.Is(err, c.want) {
			t.Errorf("%s: AttachVolume = %v, want %v", c.name, err, c.want)
		}
	}
	if err := e.drv.AttachVolume(ctx(t), "v", &virt.Volume{ID: "vol-1", Path: vol2}); err == nil {
		t.Error("attaching another file under an attached volume's id succeeded")
	}
	if err := e.drv.DetachVolume(ctx(t), "v", "vol-9"); !errors.Is(err, libvirt.ErrVolumeNotAttached) {
		t.Errorf("DetachVolume of an unknown volume = %v", err)
	}
	if err := e.drv.AttachVolume(ctx(t), "nobody", &virt.Volume{ID: "x", Path: vol2}); !errors.Is(err, virt.ErrNotFound) {
		t.Errorf("AttachVolume to an unknown instance = %v", err)
	}

	// A second one on a stopped guest is only recorded, and both come
	// back at the next boot and after an agent restart.
	if err := e.drv.PowerOff(ctx(t), "v", 0); err != nil {
		t.Fatal(err)
	}
	if err := e.drv.AttachVolume(ctx(t), "v", &virt.Volume{ID: "vol-2", Path: vol2, Device: "sdc"}); err != nil {
		t.Fatalf("AttachVolume to a stopped guest: %v", err)
	}
	if err := e.drv.PowerOn(ctx(t), "v"); err != nil {
		t.Fatal(err)
	}
	restarted := e.open()
	if err := restarted.Reboot(ctx(t), "v", true); err != nil {
		t.Fatal(err)
	}
	live = volumeTargets(domainXML(t, e.raw, name, 0))
	if live["sda"] != vol || live["sdc"] != vol2 {
		t.Fatalf("live volume disks after restart %v", live)
	}

	// Detach: gone from the live domain at once, and from its definition.
	if err := restarted.DetachVolume(ctx(t), "v", "vol-1"); err != nil {
		t.Fatalf("DetachVolume: %v", err)
	}
	live = volumeTargets(domainXML(t, e.raw, name, 0))
	if _, ok := live["sda"]; ok || live["sdc"] != vol2 {
		t.Fatalf("live volume disks after detach %v, want only sdc", live)
	}
	cfg := volumeTargets(domainXML(t, e.raw, name, golibvirt.DomainXMLInactive))
	if keys := mapKeys(cfg); !slices.Equal(keys, []string{"sdc"}) {
		t.Fatalf("persistent volume disks after detach %v", cfg)
	}
	if err := restarted.DetachVolume(ctx(t), "v", "vol-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(vol); err != nil {
		t.Errorf("the volume's file went with the detach: %v", err)
	}
	if err := restarted.Destroy(ctx(t), "v"); err != nil {
		t.Fatal(err)
	}
}

func mapKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestDiagnostics reads a running QEMU guest's counters.
func TestDiagnostics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	spec := tinySpec("dg")
	spec.EphemeralGB = 1
	if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	dg, err := e.drv.Diagnostics(ctx(t), "dg")
	if err != nil {
		t.Fatalf("Diagnostics: %v", err)
	}
	t.Logf("diagnostics: %+v", dg)
	if dg.State != "running" || dg.Driver != "libvirt" || (dg.Hypervisor != "qemu" && dg.Hypervisor != "kvm") {
		t.Errorf("diagnostics header %+v", dg)
	}
	if len(dg.CPUs) != 1 || dg.Memory.MaximumMB != 64 {
		t.Errorf("cpus %+v, memory %+v", dg.CPUs, dg.Memory)
	}
	devs := []string{}
	for _, d := range dg.Disks {
		devs = append(devs, d.Device)
	}
	if !slices.Contains(devs, "vda") || !slices.Contains(devs, "vdb") {
		t.Errorf("disks %v, want vda and vdb", devs)
	}
	if _, ok := dg.Raw["vda_read"]; !ok || dg.Raw["memory"] != 64*1024 {
		t.Errorf("raw %v", dg.Raw)
	}
	// SeaBIOS reads the boot disk, so the guest has done some I/O; wait
	// for it rather than assume it.
	waitUntil(t, 60*time.Second, "the guest to read its disk", func() error {
		dg, err := e.drv.Diagnostics(ctx(t), "dg")
		if err != nil {
			return err
		}
		if dg.Raw["vda_read_req"] == 0 || dg.CPUs[0].TimeNS == 0 {
			return errors.New("no reads or no CPU time yet")
		}
		return nil
	})
	if err := e.drv.PowerOff(ctx(t), "dg", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := e.drv.Diagnostics(ctx(t), "dg"); !errors.Is(err, virt.ErrInvalidState) {
		t.Errorf("Diagnostics of a stopped guest = %v, want virt.ErrInvalidState", err)
	}
	if _, err := e.drv.Diagnostics(ctx(t), "nobody"); !errors.Is(err, virt.ErrNotFound) {
		t.Errorf("Diagnostics of an unknown instance = %v", err)
	}
}
