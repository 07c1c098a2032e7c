package libvirt_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// testLock coordinates test processes that share the machine's libvirtd
// (two `go test ./...` at once): every process holds it shared while it
// runs, and TestLibvirtdRestart holds it exclusive while libvirtd is down,
// so that it never kills libvirtd under another process's tests.
var testLock *os.File

func TestMain(m *testing.M) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "stratus-libvirt-tests.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err == nil && syscall.Flock(int(f.Fd()), syscall.LOCK_SH) == nil {
		testLock = f
	}
	os.Exit(m.Run())
}

// exclusive takes the test lock exclusively, waiting up to wait for the
// other test processes to finish; it reports whether it got it. release
// goes back to the shared lock.
func exclusive(wait time.Duration) (ok bool, release func()) {
	if testLock == nil {
		return true, func() {}
	}
	fd := int(testLock.Fd())
	back := func() { _ = syscall.Flock(fd, syscall.LOCK_SH) }
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
