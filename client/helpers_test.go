package client

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitState waits until the servers hold the given client state.
func waitState(t *testing.T, s *fakeServer, allocID, state string) *structs.Allocation {
	t.Helper()
	var a *structs.Allocation
	waitFor(t, fmt.Sprintf("allocation %s to be %s", allocID, state), func() bool {
		a = s.alloc(allocID)
		return a != nil && a.ClientState == state
	})
	return a
}

// testLogWriter sends hclog output to t.Log (shown on failure or -v).
type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// harness is a fake server, a driver and a data dir that clients come
// and go on.
type harness struct {
	t      *testing.T
	srv    *fakeServer
	driver virt.Driver
	fake   *fake.Driver
	dir    string
	tweak  func(*Config)
	// statePath is the fake's state file, for reopen (persistent only).
	statePath string
}

func newHarness(t *testing.T, cfg fake.Config) *harness {
	d := fake.New(cfg)
	return &harness{t: t, srv: newFakeServer(t), driver: d, fake: d, dir: t.TempDir()}
}

// newClient builds a client with test timings, not started.
func (h *harness) newClient() *Client {
	h.t.Helper()
	cfg := Config{
		DataDir:             h.dir,
		NodeName:            "node-1",
		Region:              "global",
		AZ:                  "nova",
		Driver:              h.driver,
		RPC:                 h.srv,
		Logger:              hclog.New(&hclog.LoggerOptions{Output: testLogWriter{h.t}, Level: hclog.Debug}),
		PowerSyncInterval:   40 * time.Millisecond,
		FingerprintInterval: 40 * time.Millisecond,
		ReportInterval:      20 * time.Millisecond,
	}
	if h.tweak != nil {
		h.tweak(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		h.t.Fatalf("New: %v", err)
	}
	c.backoffMin, c.backoffMax = 10*time.Millisecond, 100*time.Millisecond
	h.t.Cleanup(func() { _ = c.Shutdown() })
	return c
}

// start builds and starts a client.
func (h *harness) start() *Client {
	h.t.Helper()
	c := h.newClient()
	if err := c.Start(); err != nil {
		h.t.Fatalf("Start: %v", err)
	}
	return c
}

// shutdown stops a client and checks it does not hang: Shutdown must not
// wait out a blocking query or a driver call (a minute is far beyond any
// of the harness's timers, so passing it is a hang, not slowness).
func shutdown(t *testing.T, c *Client) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Shutdown() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	case <-time.After(time.Minute):
		buf := make([]byte, 1<<20)
		t.Fatalf("Shutdown hung; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

// instances lists the driver's instances.
func instances(t *testing.T, d virt.Driver) []string {
	t.Helper()
	ids, err := d.ListInstances(context.Background())
	if err != nil {
		t.Fatalf("ListInstances: %v", err)
	}
	return ids
}

// power reads an instance's power state, or -1 if it does not exist.
func power(d virt.Driver, id string) int {
	info, err := d.GetInfo(context.Background(), id)
	if err != nil {
		return -1
	}
	return info.PowerState
}

// newPersistentHarness is newHarness with a fake whose instances live in
// a state file, so that a test can "restart the hypervisor" with reopen.
func newPersistentHarness(t *testing.T, cfg fake.Config) *harness {
	cfg.StatePath = filepath.Join(t.TempDir(), "hv.json")
	d, err := fake.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, srv: newFakeServer(t), driver: d, fake: d, dir: t.TempDir(), statePath: cfg.StatePath}
}

// reopen replaces the harness's fake with a new one on the same state
// file, as after a restart of the agent's process: the instances are
// the same, the call counters start at zero.
func (h *harness) reopen(cfg fake.Config) {
	h.t.Helper()
	cfg.StatePath = h.statePath
	d, err := fake.Open(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	h.driver, h.fake = d, d
}

// waitAction waits until the servers hold the action seq as done.
func waitAction(t *testing.T, s *fakeServer, allocID string, seq uint64) *structs.Allocation {
	t.Helper()
	var a *structs.Allocation
	waitFor(t, fmt.Sprintf("action %d of allocation %s to be reported done", seq, allocID), func() bool {
		a = s.alloc(allocID)
		return a != nil && a.ActionDoneSeq >= seq
	})
	return a
}

// waitSyncs waits for n more GetInfo calls on the harness's fake: power
// syncs of the running allocations, the clock of "nothing happened".
func (h *harness) waitSyncs(n int) {
	h.t.Helper()
	gi := h.fake.Calls("GetInfo")
	waitFor(h.t, "power syncs", func() bool { return h.fake.Calls("GetInfo") >= gi+n })
}

// noReport fails the test if the servers received a report about the
// allocation that bad matches.
func noReport(t *testing.T, s *fakeServer, allocID string, bad func(structs.AllocClientUpdate) bool) {
	t.Helper()
	for _, u := range s.reports(allocID) {
		if bad(u) {
			t.Fatalf("unexpected report %+v", u)
		}
	}
}
