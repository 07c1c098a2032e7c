// Package libvirtlock coordinates the test processes that share the
// machine's libvirtd. `go test ./...` runs packages in parallel, and one
// test (virt/libvirt's TestLibvirtdRestart) stops libvirtd: every test
// that needs libvirtd holds the lock shared while it runs, and the
// restart test takes it exclusively, so it never kills libvirtd under
// another package's guests. It is for tests only and must not be imported
// by production code.
package libvirtlock

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// path is the lock file every test process opens.
var path = filepath.Join(os.TempDir(), "stratus-libvirt-tests.lock")

// Shared holds the lock shared until the test ends, waiting while a
// restart test holds it exclusively.
func Shared(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Logf("libvirt test lock: %v (running without it)", err)
		return
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		t.Logf("libvirt test lock: %v (running without it)", err)
		_ = f.Close()
		return
	}
	t.Cleanup(func() { _ = f.Close() })
}

// Lock is a process-wide hold on the lock (virt/libvirt's TestMain
// holds it shared for the package's whole run).
type Lock struct{ f *os.File }

// HoldShared opens the lock and holds it shared; nil when it cannot.
func HoldShared() *Lock {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_SH) != nil {
		_ = f.Close()
		return nil
	}
	return &Lock{f: f}
}

// Exclusive upgrades l to exclusive, waiting up to wait for the other
// holders; it reports whether it got it. back returns to shared.
func (l *Lock) Exclusive(wait time.Duration) (ok bool, back func()) {
	if l == nil {
		return true, func() {}
	}
	fd := int(l.f.Fd())
	back = func() { _ = syscall.Flock(fd, syscall.LOCK_SH) }
	deadline := time.Now().Add(wait)
	for {
		if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			return true, back
		}
		if time.Now().After(deadline) {
			back()
			return false, func() {}
		}
		time.Sleep(200 * time.Millisecond)
	}
}
