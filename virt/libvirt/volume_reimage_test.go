package libvirt_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stratus-cloud/stratus/virt"
)

// TestReimageVolume rewrites a qcow2 volume file from a smaller raw
// image: the volume keeps its format and size and holds the image's
// data where the old data was; a missing image leaves it whole.
func TestReimageVolume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	old := bytes.Repeat([]byte("old guest data "), 100)
	vol := filepath.Join(t.TempDir(), "volume.qcow2")
	src := rawVolume(t, old) // 16 MiB raw with old data
	if out, err := exec.Command("qemu-img", "convert", "-q", "-O", "qcow2", src, vol).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert: %v: %s", err, out)
	}
	if out, err := exec.Command("qemu-img", "resize", "-q", vol, "32M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img resize: %v: %s", err, out)
	}
	image := filepath.Join(t.TempDir(), "image.raw")
	fresh := bytes.Repeat([]byte("new image "), 100)
	if err := os.WriteFile(image, append(fresh, make([]byte, 1<<20-len(fresh))...), 0o600); err != nil {
		t.Fatal(err)
	}
	v := &virt.Volume{ID: "vol-root", Path: vol}
	if err := e.drv.ReimageVolume(ctx(t), v, filepath.Join(t.TempDir(), "missing.raw")); err == nil {
		t.Fatal("reimaging from a missing image succeeded")
	}
	if data := volumeBytes(t, vol); !bytes.Equal(data[:len(old)], old) {
		t.Fatal("a failed reimage changed the volume")
	}
	if err := e.drv.ReimageVolume(ctx(t), v, image); err != nil {
		t.Fatalf("ReimageVolume: %v", err)
	}
	data := volumeBytes(t, vol)
	if len(data) != 32<<20 {
		t.Fatalf("the reimaged volume is %d bytes, want 32 MiB", len(data))
	}
	if !bytes.Equal(data[:len(fresh)], fresh) || bytes.Contains(data, old[:30]) {
		t.Fatalf("the reimaged volume does not hold the image: %q", data[:40])
	}
	out, err := exec.Command("qemu-img", "info", vol).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("file format: qcow2")) {
		t.Fatalf("the reimaged volume is not qcow2: %v: %s", err, out)
	}
	if _, err := os.Stat(vol + ".reimage"); !os.IsNotExist(err) {
		t.Fatalf("a temporary file was left: %v", err)
	}
}
