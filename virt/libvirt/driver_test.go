package libvirt_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// qcow2Image makes an empty qcow2 image of the given virtual size.
func qcow2Image(t *testing.T, size string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "image.qcow2")
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", path, size).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img create: %v: %s", err, out)
	}
	return path
}

// volume reads a volume of a pool.
func volume(t *testing.T, lv *golibvirt.Libvirt, pool, name string) *libvirtxml.StorageVolume {
	t.Helper()
	p, err := lv.StoragePoolLookupByName(pool)
	if err != nil {
		t.Fatal(err)
	}
	if v := instanceVolume(t, lv, pool, name); v != "" {
		name = v
	}
	v, err := lv.StorageVolLookupByName(p, name)
	if err != nil {
		t.Fatalf("volume %s: %v", name, err)
	}
	doc, err := lv.StorageVolGetXMLDesc(v, 0)
	if err != nil {
		t.Fatal(err)
	}
	var x libvirtxml.StorageVolume
	if err := x.Unmarshal(doc); err != nil {
		t.Fatal(err)
	}
	return &x
}

// diskOf returns the source file of a domain's disk with target dev.
func diskOf(x *libvirtxml.Domain, dev string) string {
	for _, d := range x.Devices.Disks {
		if d.Target != nil && d.Target.Dev == dev && d.Source != nil && d.Source.File != nil {
			return d.Source.File.File
		}
	}
	return ""
}

// TestSpawnBuildsTheDomain checks what a spawn creates in libvirt: the
// domain's type, size, disks, console, VNC and metadata, the volumes and
// the cached base image; then idempotency, consoles, host info and
// destroy.
func TestSpawnBuildsTheDomain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	img := qcow2Image(t, "2G")
	spec := tinySpec("a")
	spec.EphemeralGB, spec.SwapMB, spec.ImageID = 1, 32, "img-1"
	spec.ImageProperties = map[string]string{libvirt.ImagePathProperty: img}

	start := time.Now()
	info, err := e.drv.Spawn(ctx(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("spawn of a 64 MiB domain took %v", time.Since(start))
	name := e.drv.DomainName("a")
	if info.ID != "a" || info.PowerState != virt.PowerRunning || info.DriverRef != name {
		t.Fatalf("Spawn = %+v", info)
	}
	x := domainXML(t, e.raw, name, 0)
	wantType := "qemu"
	if _, err := os.Stat("/dev/kvm"); err == nil {
		wantType = "kvm"
	}
	if x.Type != wantType || x.Memory.Value != 64*1024 || x.VCPU.Value != 1 || x.Features == nil || x.Features.ACPI == nil {
		t.Errorf("domain type %s memory %d KiB vcpus %d features %+v; want %s, 64 MiB, 1, ACPI", x.Type, x.Memory.Value, x.VCPU.Value, x.Features, wantType)
	}
	root, eph, swap := diskOf(x, "vda"), diskOf(x, "vdb"), diskOf(x, "vdc")
	if filepath.Dir(root) != e.cfg.ImagesDir || !strings.HasSuffix(eph, "-disk.eph0") || !strings.HasSuffix(swap, "-disk.swap") {
		t.Errorf("disks %q %q %q", root, eph, swap)
	}
	if len(x.Devices.Serials) != 1 || x.Devices.Serials[0].Log == nil ||
		x.Devices.Serials[0].Log.File != filepath.Join(e.cfg.ConsoleDir, name+".log") {
		t.Errorf("serial %+v, want one logged to the console dir", x.Devices.Serials)
	}
	var vnc *libvirtxml.DomainGraphicVNC
	for _, g := range x.Devices.Graphics {
		if g.VNC != nil {
			vnc = g.VNC
		}
	}
	if vnc == nil || vnc.AutoPort != "yes" || vnc.Listen != "127.0.0.1" || vnc.Port < 5900 {
		t.Errorf("vnc %+v, want autoport on 127.0.0.1", vnc)
	}
	if x.Metadata == nil || !strings.Contains(x.Metadata.XML, libvirt.MetadataURI) || !strings.Contains(x.Metadata.XML, "<id>a</id>") ||
		!strings.Contains(x.Metadata.XML, `memory_mb="64"`) || !strings.Contains(x.Metadata.XML, "vm-a") {
		t.Errorf("metadata %+v", x.Metadata)
	}

	// The root disk is an overlay on the cached base, at least the
	// image's size; ephemeral and swap come from the flavor.
	pool := e.drv.PoolName()
	rootVol := volume(t, e.raw, pool, name+"-disk")
	if rootVol.Capacity.Value != 2<<30 || rootVol.BackingStore == nil || !strings.HasPrefix(filepath.Base(rootVol.BackingStore.Path), "base-") ||
		rootVol.Target.Format.Type != "qcow2" {
		t.Errorf("root volume %+v backing %+v", rootVol.Capacity, rootVol.BackingStore)
	}
	if v := volume(t, e.raw, pool, name+"-disk.eph0"); v.Capacity.Value != 1<<30 {
		t.Errorf("ephemeral capacity %d", v.Capacity.Value)
	}
	if v := volume(t, e.raw, pool, name+"-disk.swap"); v.Capacity.Value != 32<<20 {
		t.Errorf("swap capacity %d", v.Capacity.Value)
	}

	// Spawn again: the same domain. Another instance shares the base.
	again, err := e.drv.Spawn(ctx(t), spec)
	if err != nil || *again != *info {
		t.Fatalf("second Spawn = %+v, %v", again, err)
	}
	b := tinySpec("b")
	b.ImageProperties = spec.ImageProperties
	if _, err := e.drv.Spawn(ctx(t), b); err != nil {
		t.Fatal(err)
	}
	var bases []string
	for _, v := range volumeNames(t, e.raw, pool) {
		if strings.HasPrefix(v, "base-") {
			bases = append(bases, v)
		}
	}
	if len(bases) != 1 {
		t.Errorf("base volumes %v, want one shared", bases)
	}
	if got := domainNames(t, e.raw, e.ns); len(got) != 2 {
		t.Errorf("domains %v, want 2", got)
	}

	// SeaBIOS logs to the serial console even without an OS.
	waitUntil(t, 30*time.Second, "console output", func() error {
		out, err := e.drv.ConsoleOutput(ctx(t), "a", 0)
		if err != nil || !strings.Contains(out, "SeaBIOS") {
			return errors.New(out)
		}
		return nil
	})
	if out, _ := e.drv.ConsoleOutput(ctx(t), "a", 1); strings.Count(out, "\n") != 1 || strings.ContainsAny(out, "\r\x1b") {
		t.Errorf("ConsoleOutput(1) = %q", out)
	}
	c, err := e.drv.RemoteConsole(ctx(t), "a", "vnc")
	if err != nil || *c != (virt.Console{Kind: "vnc", Host: "127.0.0.1", Port: vnc.Port}) {
		t.Errorf("RemoteConsole = %+v, %v; want vnc on 127.0.0.1:%d", c, err, vnc.Port)
	}
	if _, err := e.drv.RemoteConsole(ctx(t), "a", "spice"); !errors.Is(err, virt.ErrNotSupported) {
		t.Errorf("RemoteConsole(spice) = %v", err)
	}

	hi, err := e.drv.HostInfo(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("host info: %+v", hi)
	if hi.HypervisorType != "QEMU" || !strings.HasPrefix(hi.HypervisorVersion, "7.") && !strings.HasPrefix(hi.HypervisorVersion, "8.") &&
		!strings.HasPrefix(hi.HypervisorVersion, "9.") || hi.Arch != "x86_64" || hi.VCPUs < 1 || hi.MemoryMB < 256 || hi.CPUModel == "" ||
		hi.Attributes["virt_type"] != wantType || hi.Hostname != e.cfg.HostName || !slices.Contains(hi.Traits, "HW_ARCH_X86_64") {
		t.Errorf("HostInfo = %+v", hi)
	}

	// Destroy removes the domain, its volumes and its log, not the base.
	if err := e.drv.Destroy(ctx(t), "a"); err != nil {
		t.Fatal(err)
	}
	for _, v := range volumeNames(t, e.raw, pool) {
		if strings.HasPrefix(v, name) {
			t.Errorf("volume %s survived Destroy", v)
		}
	}
	if _, err := os.Stat(filepath.Join(e.cfg.ConsoleDir, name+".log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("console log survived Destroy: %v", err)
	}
	if ids, err := e.drv.ListInstances(ctx(t)); err != nil || !slices.Equal(ids, []string{"b"}) {
		t.Errorf("ListInstances = %v, %v", ids, err)
	}
}

// TestFailedSpawnLeavesNothing makes spawns fail at every step, for real
// (a missing or corrupt image) and by injection: each leaves no domain,
// no volume but the cached base image, and no console log.
func TestFailedSpawnLeavesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	good := qcow2Image(t, "1G")
	corrupt := filepath.Join(t.TempDir(), "corrupt.qcow2")
	// A qcow2 header of version 0 and nonsense: qemu-img accepts it as
	// a backing file, QEMU refuses to boot it.
	hdr := append([]byte{'Q', 'F', 'I', 0xfb}, make([]byte, 508)...)
	hdr[31] = 1 // virtual size 1 byte
	if err := os.WriteFile(corrupt, hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, image, step string
	}{
		{"missing image", "/nonexistent/stratus/image.qcow2", ""},
		{"relative image path", "image.qcow2", ""},
		{"corrupt image", corrupt, ""},
		{"root volume", good, "disk"},
		{"ephemeral volume", good, "disk.eph0"},
		{"swap volume", good, "disk.swap"},
		{"define", good, "define"},
		{"start", good, "start"},
		{"after start", good, "started"},
	}
	for i, c := range cases {
		id := "f" + string(rune('a'+i))
		e.drv.FailSpawnAt(c.step)
		spec := tinySpec(id)
		spec.EphemeralGB, spec.SwapMB = 1, 16
		spec.ImageProperties = map[string]string{libvirt.ImagePathProperty: c.image}
		_, err := e.drv.Spawn(ctx(t), spec)
		if err == nil {
			t.Errorf("%s: Spawn succeeded", c.name)
			continue
		}
		t.Logf("%s: %v", c.name, err)
		if doms := domainNames(t, e.raw, e.ns); len(doms) != 0 {
			t.Errorf("%s: domains left: %v", c.name, doms)
		}
		for _, v := range volumeNames(t, e.raw, e.drv.PoolName()) {
			if !strings.HasPrefix(v, "base-") {
				t.Errorf("%s: volume left: %s", c.name, v)
			}
		}
		if logs, _ := os.ReadDir(e.cfg.ConsoleDir); len(logs) != 0 {
			t.Errorf("%s: console logs left: %v", c.name, logs)
		}
		if _, err := e.drv.GetInfo(ctx(t), id); !errors.Is(err, virt.ErrNotFound) {
			t.Errorf("%s: GetInfo = %v, want ErrNotFound", c.name, err)
		}
	}
	e.drv.FailSpawnAt("")
	if ids, err := e.drv.ListInstances(ctx(t)); err != nil || len(ids) != 0 {
		t.Fatalf("ListInstances = %v, %v", ids, err)
	}
	// The same ids spawn fine afterwards.
	spec := tinySpec("fd")
	spec.ImageProperties = map[string]string{libvirt.ImagePathProperty: good}
	if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
}

// imageInfo is qemu-img info's JSON.
type imageInfo struct {
	Format          string `json:"format"`
	VirtualSize     int64  `json:"virtual-size"`
	BackingFilename string `json:"backing-filename"`
}

func qemuImgInfo(t *testing.T, path string) imageInfo {
	t.Helper()
	out, err := exec.Command("qemu-img", "info", "-U", "--output=json", path).Output()
	if err != nil {
		t.Fatalf("qemu-img info %s: %v", path, err)
	}
	var info imageInfo
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	return info
}

// TestResizeRescueSnapshot exercises the operations that redefine the
// domain or touch its disks.
func TestResizeRescueSnapshot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	id := "r"
	name := e.drv.DomainName(id)
	if _, err := e.drv.Spawn(ctx(t), tinySpec(id)); err != nil {
		t.Fatal(err)
	}
	power := func() int {
		t.Helper()
		info, err := e.drv.GetInfo(ctx(t), id)
		if err != nil {
			t.Fatal(err)
		}
		return info.PowerState
	}

	// Resize a running instance: bigger everything, still running.
	big := &virt.InstanceSpec{VCPUs: 2, MemoryMB: 96, RootGB: 2, EphemeralGB: 1, SwapMB: 16}
	if err := e.drv.Resize(ctx(t), id, big); err != nil {
		t.Fatal(err)
	}
	x := domainXML(t, e.raw, name, 0)
	if x.Memory.Value != 96*1024 || x.VCPU.Value != 2 || diskOf(x, "vdb") == "" || diskOf(x, "vdc") == "" || power() != virt.PowerRunning {
		t.Errorf("after resize: memory %d vcpus %d disks %q %q power %d", x.Memory.Value, x.VCPU.Value, diskOf(x, "vdb"), diskOf(x, "vdc"), power())
	}
	if v := volume(t, e.raw, e.drv.PoolName(), name+"-disk"); v.Capacity.Value != 2<<30 {
		t.Errorf("root capacity %d after resize, want 2 GiB", v.Capacity.Value)
	}
	if err := e.drv.Resize(ctx(t), id, tinySpec(id)); !errors.Is(err, virt.ErrDiskShrink) {
		t.Errorf("shrinking resize = %v", err)
	}
	if err := e.drv.Pause(ctx(t), id); err != nil {
		t.Fatal(err)
	}
	if err := e.drv.Resize(ctx(t), id, big); !errors.Is(err, virt.ErrInvalidState) {
		t.Errorf("resize of a paused instance = %v", err)
	}
	if err := e.drv.Unpause(ctx(t), id); err != nil {
		t.Fatal(err)
	}

	// Snapshot: a standalone qcow2 of the root disk; the guest runs on.
	path, err := e.drv.Snapshot(ctx(t), id, "snap-1")
	if err != nil {
		t.Fatal(err)
	}
	if info := qemuImgInfo(t, path); info.Format != "qcow2" || info.BackingFilename != "" || info.VirtualSize != 2<<30 {
		t.Errorf("snapshot %s: %+v", path, info)
	}
	if power() != virt.PowerRunning {
		t.Error("not running after the snapshot")
	}
	if _, err := e.drv.Snapshot(ctx(t), id, "../x"); err == nil {
		t.Error("snapshot name with a slash accepted")
	}

	// Rescue: the rescue disk first, the root disk second.
	rootPath := diskOf(domainXML(t, e.raw, name, 0), "vda")
	for range 2 {
		if err := e.drv.Rescue(ctx(t), id, virt.RescueSpec{}); err != nil {
			t.Fatal(err)
		}
	}
	x = domainXML(t, e.raw, name, 0)
	if !strings.HasSuffix(diskOf(x, "vda"), "-disk.rescue") || diskOf(x, "vdb") != rootPath || diskOf(x, "vdc") != "" || power() != virt.PowerRunning {
		t.Errorf("rescued disks %q %q %q, power %d", diskOf(x, "vda"), diskOf(x, "vdb"), diskOf(x, "vdc"), power())
	}
	if err := e.drv.Rescue(ctx(t), id, virt.RescueSpec{Image: "cirros"}); err != nil {
		t.Errorf("rescue of a rescued instance (another image) = %v, want a no-op", err)
	}
	if err := e.drv.Unrescue(ctx(t), id); err != nil {
		t.Fatal(err)
	}
	x = domainXML(t, e.raw, name, 0)
	if diskOf(x, "vda") != rootPath || diskOf(x, "vdb") == "" || power() != virt.PowerRunning {
		t.Errorf("unrescued disks %q %q, power %d", diskOf(x, "vda"), diskOf(x, "vdb"), power())
	}
	if instanceVolume(t, e.raw, e.drv.PoolName(), name+"-disk.rescue") != "" {
		t.Error("rescue volume survived Unrescue")
	}
	checkStableRescue(t, e, id, rootPath)
	if err := e.drv.Rescue(ctx(t), id, virt.RescueSpec{Image: "cirros"}); err == nil || !strings.Contains(err.Error(), "image service") {
		t.Errorf("rescue from an image id = %v", err)
	}

	// A stopped instance resizes and stays stopped.
	if err := e.drv.PowerOff(ctx(t), id, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := e.drv.Resize(ctx(t), id, &virt.InstanceSpec{VCPUs: 1, MemoryMB: 80, RootGB: 2, EphemeralGB: 1}); err != nil {
		t.Fatal(err)
	}
	x = domainXML(t, e.raw, name, golibvirt.DomainXMLInactive)
	if x.Memory.Value != 80*1024 || diskOf(x, "vdc") != "" || power() != virt.PowerShutdown {
		t.Errorf("stopped resize: memory %d swap %q power %d", x.Memory.Value, diskOf(x, "vdc"), power())
	}
	if instanceVolume(t, e.raw, e.drv.PoolName(), name+"-disk.swap") != "" {
		t.Error("swap volume survived a resize to no swap")
	}
}

// TestEventsReportPowerChanges: changes made behind the driver's back
// arrive on Events (from libvirt's lifecycle stream: the driver does not poll).
func TestEventsReportPowerChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if _, err := e.drv.Spawn(ctx(t), tinySpec("ev")); err != nil {
		t.Fatal(err)
	}
	dom, err := e.raw.DomainLookupByName(e.drv.DomainName("ev"))
	if err != nil {
		t.Fatal(err)
	}
	expect := func(what string, act func() error, power int) {
		t.Helper()
		start := time.Now()
		if err := act(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		acted := time.Since(start) // the event may come before the call returns
		timeout := time.After(time.Minute)
		for {
			select {
			case ev := <-e.drv.Events():
				if ev.ID == "ev" && ev.PowerState == power {
					// The driver does not poll: an event at all came
					// from libvirt's lifecycle stream. How soon is a
					// figure, logged, not asserted.
					t.Logf("%s: call took %v, event after %v", what, acted, time.Since(start))
					return
				}
			case <-timeout:
				t.Fatalf("%s: no event with power %d", what, power)
			}
		}
	}
	expect("virsh destroy", func() error { return e.raw.DomainDestroy(dom) }, virt.PowerShutdown)
	expect("virsh start", func() error { return e.raw.DomainCreate(dom) }, virt.PowerRunning)
	expect("virsh suspend", func() error { return e.raw.DomainSuspend(dom) }, virt.PowerPaused)
	expect("virsh managedsave", func() error { return e.raw.DomainManagedSave(dom, 0) }, virt.PowerSuspend)
}

// TestLiveMigrateFailureLeavesTheInstance: with a migration URI the
// driver offers live migration; one to a libvirtd that does not answer
// fails and leaves the instance running here.
func TestLiveMigrateFailureLeavesTheInstance(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *libvirt.Config) { c.MigrationURI = "qemu+tcp://127.0.0.1/system" })
	if !e.drv.Capabilities().LiveMigrate {
		t.Fatal("LiveMigrate capability off with a migration URI")
	}
	hi, err := e.drv.HostInfo(ctx(t))
	if err != nil || hi.Attributes["migration_uri"] != "qemu+tcp://127.0.0.1/system" {
		t.Fatalf("HostInfo = %+v, %v", hi, err)
	}
	if err := e.drv.LiveMigrate(ctx(t), "nobody", "qemu+tcp://127.0.0.1:1/system"); !errors.Is(err, virt.ErrNotFound) {
		t.Errorf("LiveMigrate of an unknown instance = %v", err)
	}
	if _, err := e.drv.Spawn(ctx(t), tinySpec("m")); err != nil {
		t.Fatal(err)
	}
	err = e.drv.LiveMigrate(ctx(t), "m", "qemu+tcp://127.0.0.1:1/system")
	if err == nil {
		t.Fatal("live migration to nowhere succeeded")
	}
	t.Logf("LiveMigrate: %v", err)
	if info, err := e.drv.GetInfo(ctx(t), "m"); err != nil || info.PowerState != virt.PowerRunning {
		t.Errorf("after a failed migration: %+v, %v", info, err)
	}
	if err := e.drv.PowerOff(ctx(t), "m", 0); err != nil {
		t.Fatal(err)
	}
	if err := e.drv.LiveMigrate(ctx(t), "m", "qemu+tcp://127.0.0.1:1/system"); !errors.Is(err, virt.ErrInvalidState) {
		t.Errorf("LiveMigrate of a stopped instance = %v", err)
	}
}

// TestClose: Close returns without waiting out the reconnect wait even
// while libvirtd is unreachable and an operation waits for it; later
// calls fail with ErrClosed. The wait is an hour, so a Close that waited
// for it is told from a slow machine without timing Close itself.
func TestClose(t *testing.T) {
	t.Parallel()
	d, err := libvirt.New(libvirt.Config{URI: "qemu+unix:///system?socket=/nonexistent/libvirt-sock",
		ImagesDir: t.TempDir(), ReconnectWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan error, 1)
	go func() {
		_, err := d.GetInfo(t.Context(), "a")
		waiting <- err
	}()
	// Close while the operation waits for libvirtd, not before it
	// started waiting (it would then fail on the closed driver at once).
	for deadline := time.Now().Add(time.Minute); d.WaitingForConnection() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the operation never waited for a connection")
		}
		time.Sleep(5 * time.Millisecond)
	}
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close is waiting out the hour of reconnect wait")
	}
	if err := <-waiting; !errors.Is(err, libvirt.ErrClosed) {
		t.Errorf("operation waiting during Close = %v, want ErrClosed", err)
	}
	if _, err := d.ListInstances(t.Context()); !errors.Is(err, libvirt.ErrClosed) {
		t.Errorf("ListInstances after Close = %v", err)
	}
	if _, ok := <-d.Events(); ok {
		t.Error("Events still open after Close")
	}
	_ = d.Close()
}

// TestUnavailable: without libvirtd an operation fails after
// ReconnectWait with an error that says why, and never hangs.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	d, err := libvirt.New(libvirt.Config{URI: "qemu+unix:///system?socket=/nonexistent/libvirt-sock",
		ImagesDir: t.TempDir(), ReconnectWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.Spawn(t.Context(), tinySpec("a"))
	if !errors.Is(err, libvirt.ErrUnavailable) || !strings.Contains(err.Error(), "/nonexistent/libvirt-sock") {
		t.Fatalf("Spawn without libvirtd = %v", err)
	}
	if _, err := libvirt.New(libvirt.Config{Namespace: "bad/ns"}); err == nil {
		t.Error("namespace with a slash accepted")
	}
	if _, err := libvirt.New(libvirt.Config{VirtType: "xen"}); err == nil {
		t.Error("virt type xen accepted")
	}
}

// checkStableRescue: a stable rescue (hw_rescue_device/hw_rescue_bus)
// keeps every disk of the instance where it was and adds the rescue disk
// as the asked device on the asked bus, first in the boot order; the
// guest runs; unrescue restores the ordinary layout.
func checkStableRescue(t *testing.T, e *env, id, rootPath string) {
	t.Helper()
	name := e.drv.DomainName(id)
	bootOrder := func(d libvirtxml.DomainDisk) uint {
		if d.Boot == nil {
			return 0
		}
		return d.Boot.Order
	}
	for _, tc := range []struct {
		spec       virt.RescueSpec
		dev, bus   string
		deviceType string
	}{
		{virt.RescueSpec{Device: "cdrom"}, "hda", "ide", "cdrom"},
		{virt.RescueSpec{Bus: "scsi"}, "sda", "scsi", "disk"},
	} {
		if err := e.drv.Rescue(ctx(t), id, tc.spec); err != nil {
			t.Fatalf("stable rescue %+v: %v", tc.spec, err)
		}
		x := domainXML(t, e.raw, name, 0)
		if diskOf(x, "vda") != rootPath || !strings.HasSuffix(diskOf(x, tc.dev), "-disk.rescue") {
			t.Errorf("stable rescue %+v: vda %q, %s %q", tc.spec, diskOf(x, "vda"), tc.dev, diskOf(x, tc.dev))
		}
		if len(x.OS.BootDevices) != 0 {
			t.Errorf("stable rescue %+v: <os><boot> %v beside per-device boot order", tc.spec, x.OS.BootDevices)
		}
		for _, d := range x.Devices.Disks {
			switch d.Target.Dev {
			case tc.dev:
				if d.Device != tc.deviceType || d.Target.Bus != tc.bus || bootOrder(d) != 1 {
					t.Errorf("stable rescue %+v: rescue disk %s on %s, boot order %d", tc.spec, d.Device, d.Target.Bus, bootOrder(d))
				}
			case "vda":
				if bootOrder(d) != 2 {
					t.Errorf("stable rescue %+v: root disk boot order %d, want 2", tc.spec, bootOrder(d))
				}
			}
		}
		if info, err := e.drv.GetInfo(ctx(t), id); err != nil || info.PowerState != virt.PowerRunning {
			t.Errorf("stable rescue %+v: power %+v %v", tc.spec, info, err)
		}
		if err := e.drv.Unrescue(ctx(t), id); err != nil {
			t.Fatal(err)
		}
		x = domainXML(t, e.raw, name, 0)
		if diskOf(x, "vda") != rootPath || diskOf(x, tc.dev) != "" || len(x.OS.BootDevices) == 0 {
			t.Errorf("after stable rescue %+v: vda %q, %s %q, boot %v", tc.spec, diskOf(x, "vda"), tc.dev, diskOf(x, tc.dev), x.OS.BootDevices)
		}
	}
	if err := e.drv.Rescue(ctx(t), id, virt.RescueSpec{Device: "floppy", Bus: "virtio"}); err == nil {
		t.Error("a floppy on virtio accepted")
	}
}
