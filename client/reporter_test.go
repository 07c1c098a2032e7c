package client

import (
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

func TestReportsBatched(t *testing.T) {
	h := newHarness(t, fake.Config{})
	h.tweak = func(c *Config) { c.ReportInterval = 100 * time.Millisecond }
	c := h.start()
	const n = 40
	allocs := h.srv.addAllocs(c.HostID(), n)
	for _, a := range allocs {
		waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	}
	_, _, calls := h.srv.counts()
	// 40 spawning and 40 running reports would be 80 calls unbatched;
	// an idle machine needs about 4. The bound leaves room for a loaded
	// one (spawns spread over many report intervals) and still fails
	// if reports go one by one.
	if calls > n/2 {
		t.Fatalf("%d UpdateFromClient calls for %d allocations", calls, n)
	}
	t.Logf("%d allocations reported in %d calls", n, calls)
}

func TestReportsRetriedNeverDropped(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	h.srv.failNext("Alloc.UpdateFromClient", 4)
	h.fake.FailNext("Spawn", nil)
	a := h.srv.addAlloc(c.HostID())
	b := h.srv.addAlloc(c.HostID())
	// Whichever spawned first failed; the failure is not dropped.
	waitFor(t, "one failed and one running", func() bool {
		sa, sb := h.srv.alloc(a.ID).ClientState, h.srv.alloc(b.ID).ClientState
		return (sa == structs.AllocClientFailed && sb == structs.AllocClientRunning) ||
			(sb == structs.AllocClientFailed && sa == structs.AllocClientRunning)
	})
	waitFor(t, "the queue to drain", func() bool { return c.reporter.pendingCount() == 0 })
}

func TestReportsAboutUnknownAllocationsDropped(t *testing.T) {
	h := newHarness(t, fake.Config{})
	h.srv.strictUpdates = true
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	c.reporter.queue(structs.AllocClientUpdate{AllocID: "no-such-alloc", ClientState: structs.AllocClientDeleted})
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	waitFor(t, "the queue to drain", func() bool { return c.reporter.pendingCount() == 0 })
}
