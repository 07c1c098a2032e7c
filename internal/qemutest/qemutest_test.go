package qemutest

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestVerdicts: a written pattern reads back, a different pattern and a
// read of a missing file are failures, and Share reads a file another
// qemu-io could hold.
func TestVerdicts(t *testing.T) {
	img := Need(t, "qemu-img")[0]
	file := filepath.Join(t.TempDir(), "d.qcow2")
	if out, err := exec.Command(img, "create", "-f", "qcow2", file, "1M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img create: %v: %s", err, out)
	}
	IO(t, file, "write -P 0xab 0 64k")
	if out, ok := Try(t, file, Opts{Share: true}, "read -P 0xab 0 64k", "read -P 0 64k 64k"); !ok {
		t.Fatalf("the written pattern: %s", out)
	}
	if out, ok := Try(t, file, Opts{ReadOnly: true}, "read -P 0xab 0 64k", "read -P 0xcd 0 4k"); ok {
		t.Fatalf("a pattern never written read back: %s", out)
	}
	if out, ok := Try(t, filepath.Join(t.TempDir(), "missing.qcow2"), Opts{}, "read 0 4k"); ok {
		t.Fatalf("a missing file read: %s", out)
	}
}
