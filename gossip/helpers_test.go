package gossip

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

const (
	pollInterval = 25 * time.Millisecond
	// waitTimeout is generous for a loaded 2-core CI box under -race; the
	// conditions normally hold within a few hundred ms (failures: ~1-3 s).
	waitTimeout = 60 * time.Second
)

// testLogWriter forwards log lines to t.Log until the test's cleanups run.
// Memberlist goroutines can log after Shutdown returns, and t.Log after a
// test finishes panics, so late lines are dropped.
type testLogWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// testLogger logs at Warn unless STRATUS_TEST_LOG_LEVEL says otherwise.
func testLogger(t testing.TB, name string) hclog.Logger {
	w := &testLogWriter{t: t}
	t.Cleanup(func() { // registered first, so it runs after the pool shutdowns
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	level := hclog.Warn
	if s := os.Getenv("STRATUS_TEST_LOG_LEVEL"); s != "" {
		level = hclog.LevelFromString(s)
	}
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: level, Output: w})
}

func testMeta(name string, role Role, region string) Meta {
	return Meta{
		ID:       "id-" + name,
		Role:     role,
		Region:   region,
		AZ:       region + "-a",
		RPCAddr:  "127.0.0.1:4647",
		HTTPAddr: "127.0.0.1:4646",
		Expect:   map[Role]int{RoleServer: 3}[role],
		Version:  "0.0.0-test",
	}
}

// newTestPool starts a Fast pool on loopback with a kernel-chosen port.
func newTestPool(t testing.TB, name string, meta Meta) *Pool {
	t.Helper()
	p, err := New(Config{
		NodeName: name,
		BindAddr: "127.0.0.1",
		Meta:     meta,
		Logger:   testLogger(t, name),
		Fast:     true,
	})
	if err != nil {
		t.Fatalf("New(%s): %v", name, err)
	}
	t.Cleanup(func() {
		if err := p.Shutdown(); err != nil {
			t.Errorf("Shutdown(%s): %v", name, err)
		}
	})
	return p
}

// eventLog records a pool's events in the background so tests can wait for
// a particular one without juggling selects.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func watchEvents(p *Pool) *eventLog {
	l := &eventLog{}
	go func() {
		for ev := range p.Events() { // ends when the pool shuts down
			l.mu.Lock()
			l.events = append(l.events, ev)
			l.mu.Unlock()
		}
	}()
	return l
}

// find returns the first recorded event matching typ and member name.
func (l *eventLog) find(typ EventType, member string) (Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range l.events {
		if ev.Type == typ && ev.Member.Name == member {
			return ev, true
		}
	}
	return Event{}, false
}

func (l *eventLog) wait(t testing.TB, typ EventType, member string) Event {
	t.Helper()
	var ev Event
	waitFor(t, fmt.Sprintf("%s event for %s", typ, member), func() bool {
		var ok bool
		ev, ok = l.find(typ, member)
		return ok
	})
	return ev
}

// waitFor polls cond until it holds or waitTimeout passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", waitTimeout, what)
		}
		time.Sleep(pollInterval)
	}
}

// member looks a member up by name in p's view.
func member(p *Pool, name string) (Member, bool) {
	for _, m := range p.Members() {
		if m.Name == name {
			return m, true
		}
	}
	return Member{}, false
}

func hasStatus(p *Pool, name string, s Status) bool {
	m, ok := member(p, name)
	return ok && m.Status == s
}

func aliveCount(p *Pool) int {
	n := 0
	for _, m := range p.Members() {
		if m.Status == StatusAlive {
			n++
		}
	}
	return n
}

func names(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

// cluster is three joined pools: two servers in different regions and a
// client in the first server's region.
type cluster struct {
	a, b, c *Pool
	// events watchers for a and b, started before anyone joined.
	ea, eb *eventLog
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	cl := &cluster{
		a: newTestPool(t, "a", testMeta("a", RoleServer, "eu")),
		b: newTestPool(t, "b", testMeta("b", RoleServer, "us")),
		c: newTestPool(t, "c", testMeta("c", RoleClient, "eu")),
	}
	cl.ea, cl.eb = watchEvents(cl.a), watchEvents(cl.b)
	for _, p := range []*Pool{cl.b, cl.c} {
		if n, err := p.Join([]string{cl.a.Addr()}); err != nil || n != 1 {
			t.Fatalf("Join(%s) = %d, %v", cl.a.Addr(), n, err)
		}
	}
	for _, p := range cl.all() {
		waitFor(t, p.cfg.NodeName+" to see 3 alive members", func() bool {
			return aliveCount(p) == 3
		})
	}
	return cl
}

func (cl *cluster) all() []*Pool { return []*Pool{cl.a, cl.b, cl.c} }
