package storage

import (
	"os"
	"os/exec"
	"testing"
)

// testPool is a pool in a temporary directory; qemu-img must be there
// (a failure under CI=true, a skip elsewhere).
func testPool(t *testing.T) *FilePool {
	t.Helper()
	if _, err := exec.LookPath("qemu-img"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("qemu-img (qemu-utils) is required under CI=true: %v", err)
		}
		t.Skip("qemu-img (qemu-utils) is not installed")
	}
	p, err := NewFilePool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p
}
