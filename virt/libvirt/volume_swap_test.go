package libvirt_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// rawVolume is a 16 MiB raw volume file holding pattern at 0 and at
// 9 MiB.
func rawVolume(t *testing.T, pattern []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.raw")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(16 << 20); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{0, 9 << 20} {
		if _, err := f.WriteAt(pattern, off); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// volumeBytes reads a volume file as the guest sees it (through its
// format), while QEMU may hold it open.
func volumeBytes(t *testing.T, path string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "read.raw")
	if b, err := exec.Command("qemu-img", "convert", "-U", "-O", "raw", path, out).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert %s: %v: %s", path, err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestSwapVolume swaps a running QEMU guest's attached volume for
// another (Nova's swap volume): the guest keeps running on the same
// domain, its device now backed by the new qcow2 volume holding the old
// one's data; the record names the new volume (a detach by its id
// works), and bad swaps fail clearly.
func TestSwapVolume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if _, err := e.drv.Spawn(ctx(t), tinySpec("sw")); err != nil {
		t.Fatal(err)
	}
	name := e.drv.DomainName("sw")
	pattern := bytes.Repeat([]byte("stratus swap volume "), 400)
	oldVol := rawVolume(t, pattern)
	newVol := qcow2Image(t, "16M")
	if err := e.drv.AttachVolume(ctx(t), "sw", &virt.Volume{ID: "vol-old", Path: oldVol}); err != nil {
		t.Fatal(err)
	}
	before, err := e.raw.DomainLookupByName(name)
	if err != nil {
		t.Fatal(err)
	}

	if err := e.drv.SwapVolume(ctx(t), "sw", "vol-nope", &virt.Volume{ID: "vol-new", Path: newVol}); !errors.Is(err, libvirt.ErrVolumeNotAttached) {
		t.Errorf("swapping a volume the guest does not have = %v", err)
	}
	if err := e.drv.SwapVolume(ctx(t), "sw", "vol-old", &virt.Volume{ID: "vol-new", Path: newVol}); err != nil {
		t.Fatalf("SwapVolume: %v", err)
	}
	after, err := e.raw.DomainLookupByName(name)
	if err != nil {
		t.Fatal(err)
	}
	state, _, err := e.raw.DomainGetState(after, 0)
	if err != nil || after.ID != before.ID || golibvirt.DomainState(state) != golibvirt.DomainRunning {
		t.Fatalf("the guest did not keep running: domain id %d → %d, state %d, %v", before.ID, after.ID, state, err)
	}
	if live := volumeTargets(domainXML(t, e.raw, name, 0)); live["sda"] != newVol {
		t.Fatalf("live volume disks after the swap %v, want sda → %s", live, newVol)
	}
	if cfg := volumeTargets(domainXML(t, e.raw, name, golibvirt.DomainXMLInactive)); cfg["sda"] != newVol {
		t.Fatalf("persistent volume disks after the swap %v", cfg)
	}
	data := volumeBytes(t, newVol)
	for _, off := range []int{0, 9 << 20} {
		if !bytes.Equal(data[off:off+len(pattern)], pattern) {
			t.Fatalf("the new volume lacks the old one's data at %d: %q", off, data[off:off+40])
		}
	}
	// Again: the new volume is there already.
	if err := e.drv.SwapVolume(ctx(t), "sw", "vol-old", &virt.Volume{ID: "vol-new", Path: newVol}); err != nil {
		t.Errorf("repeating the swap = %v", err)
	}
	if err := e.drv.DetachVolume(ctx(t), "sw", "vol-old"); !errors.Is(err, libvirt.ErrVolumeNotAttached) {
		t.Errorf("the old volume is still recorded: detach = %v", err)
	}
	if err := e.drv.PowerOff(ctx(t), "sw", 0); err != nil {
		t.Fatal(err)
	}
	if err := e.drv.SwapVolume(ctx(t), "sw", "vol-new", &virt.Volume{ID: "vol-old", Path: oldVol}); !errors.Is(err, virt.ErrInvalidState) {
		t.Errorf("swapping on a stopped guest = %v, want virt.ErrInvalidState", err)
	}
	if err := e.drv.DetachVolume(ctx(t), "sw", "vol-new"); err != nil {
		t.Fatalf("detach of the new volume: %v", err)
	}
	if err := e.drv.Destroy(ctx(t), "sw"); err != nil {
		t.Fatal(err)
	}
}

// TestSwapRootVolume swaps the volume a running guest booted from (Nova
// allows the root volume) for a qcow2 volume: a larger one fails the
// copy (QEMU's mirror needs equal sizes) and leaves the guest on its
// old disk; one of the same size succeeds, the guest keeps running on
// vda, now the new volume holding the old one's data, and the record's
// root volume is the new one, so the persistent definition boots from
// it.
func TestSwapRootVolume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	pattern := bytes.Repeat([]byte("stratus root swap "), 400)
	oldVol := rawVolume(t, pattern)
	larger, newVol := qcow2Image(t, "32M"), qcow2Image(t, "16M")
	spec := tinySpec("rs")
	spec.RootVolume = &virt.Volume{ID: "vol-root", Path: oldVol, Device: "/dev/vda"}
	if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	name := e.drv.DomainName("rs")
	if err := e.drv.SwapVolume(ctx(t), "rs", "vol-root", &virt.Volume{ID: "vol-big", Path: larger}); err == nil {
		t.Fatal("a swap onto a larger volume succeeded; QEMU's mirror was expected to refuse it")
	}
	if err := e.drv.SwapVolume(ctx(t), "rs", "vol-root", &virt.Volume{ID: "vol-root2", Path: newVol}); err != nil {
		t.Fatalf("SwapVolume of the root volume: %v", err)
	}
	dom, err := e.raw.DomainLookupByName(name)
	if err != nil {
		t.Fatal(err)
	}
	if state, _, err := e.raw.DomainGetState(dom, 0); err != nil || golibvirt.DomainState(state) != golibvirt.DomainRunning {
		t.Fatalf("the guest did not keep running: state %d, %v", state, err)
	}
	for _, flags := range []golibvirt.DomainXMLFlags{0, golibvirt.DomainXMLInactive} {
		var src string
		for _, d := range domainXML(t, e.raw, name, flags).Devices.Disks {
			if d.Target != nil && d.Target.Dev == "vda" && d.Source != nil && d.Source.File != nil {
				src = d.Source.File.File
			}
		}
		if src != newVol {
			t.Fatalf("vda (flags %d) is %q after the swap, want %s", flags, src, newVol)
		}
	}
	data := volumeBytes(t, newVol)
	for _, off := range []int{0, 9 << 20} {
		if !bytes.Equal(data[off:off+len(pattern)], pattern) {
			t.Fatalf("the new root volume lacks the old one's data at %d: %q", off, data[off:off+40])
		}
	}
	if err := e.drv.SwapVolume(ctx(t), "rs", "vol-root", &virt.Volume{ID: "vol-root2", Path: newVol}); err != nil {
		t.Errorf("repeating the swap = %v", err)
	}
	if err := e.drv.Destroy(ctx(t), "rs"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(newVol); err != nil {
		t.Errorf("destroying the guest touched its root volume: %v", err)
	}
}
