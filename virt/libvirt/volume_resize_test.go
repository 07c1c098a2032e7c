package libvirt_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/virt"
)

// TestResizeVolume grows the disks of a running domain booted from a
// volume, its root volume's (found by its serial) and an attached
// one's, with virDomainBlockResize, leaves a disk already large enough
// alone, grows the file of a stopped domain's volume with qemu-img, and
// refuses a volume the instance does not have.
func TestResizeVolume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	root, data := qcow2Image(t, "64M"), qcow2Image(t, "16M")
	spec := tinySpec("r")
	spec.RootVolume = &virt.Volume{ID: "3f1d2c4b-0000-4000-8000-00000000root", Path: root, Device: "/dev/vda"}
	if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	if err := e.drv.AttachVolume(ctx(t), "r", &virt.Volume{ID: "data", Path: data}); err != nil {
		t.Fatal(err)
	}
	dom, err := e.raw.DomainLookupByName(e.drv.DomainName("r"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.drv.ResizeVolume(ctx(t), "r", spec.RootVolume.ID, 128<<20); err != nil {
		t.Fatalf("ResizeVolume root: %v", err)
	}
	if got := guestDiskSize(t, e.raw, dom, "vda"); got != 128<<20 {
		t.Fatalf("root disk is %d bytes, want %d", got, 128<<20)
	}
	if err := e.drv.ResizeVolume(ctx(t), "r", "data", 32<<20); err != nil {
		t.Fatalf("ResizeVolume data: %v", err)
	}
	if err := e.drv.ResizeVolume(ctx(t), "r", "data", 8<<20); err != nil {
		t.Fatalf("ResizeVolume to a smaller size: %v", err)
	}
	if got := guestDiskSize(t, e.raw, dom, "sda"); got != 32<<20 {
		t.Fatalf("data disk is %d bytes, want %d", got, 32<<20)
	}
	if err := e.drv.ResizeVolume(ctx(t), "r", "missing", 1<<30); !errors.Is(err, virt.ErrVolumeNotAttached) {
		t.Fatalf("ResizeVolume of a volume not attached = %v", err)
	}

	if err := e.drv.PowerOff(ctx(t), "r", time.Second); err != nil {
		t.Fatal(err)
	}
	if err := e.drv.ResizeVolume(ctx(t), "r", "data", 48<<20); err != nil {
		t.Fatalf("ResizeVolume of a stopped instance: %v", err)
	}
	if got := fileVirtualSize(t, data); got != 48<<20 {
		t.Fatalf("stopped instance's volume file is %d bytes, want %d", got, 48<<20)
	}
}
