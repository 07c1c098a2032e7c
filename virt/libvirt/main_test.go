package libvirt_test

import (
	"os"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/libvirtlock"
)

// testLock coordinates the test processes that share the machine's
// libvirtd (see internal/libvirtlock): this package holds it shared while
// it runs, and TestLibvirtdRestart holds it exclusive while libvirtd is
// down, so that it never kills libvirtd under another process's tests.
var testLock *libvirtlock.Lock

func TestMain(m *testing.M) {
	testLock = libvirtlock.HoldShared()
	os.Exit(m.Run())
}

// exclusive takes the test lock exclusively, waiting up to wait for the
// other test processes' libvirt tests to finish; it reports whether it
// got it. release goes back to the shared lock.
func exclusive(wait time.Duration) (ok bool, release func()) {
	return testLock.Exclusive(wait)
}
