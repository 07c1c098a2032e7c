package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/structs"
)

// The scaffolding the idempotent-write tests share: clients that write
// through any live server, retrying as the agent does, while the leader
// changes and dies (creates and tasks alike), and the check of the
// leader's purge of idempotency records.

// liveServers is the set of servers a test's clients may call; a killed
// server leaves it first.
type liveServers struct {
	mu   sync.Mutex
	list []*Server
}

func (l *liveServers) pick() *Server {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.list[rand.IntN(len(l.list))]
}

func (l *liveServers) remove(s *Server) []*Server {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*Server
	for _, x := range l.list {
		if x != s {
			out = append(out, x)
		}
	}
	l.list = out
	return out
}

// killServer stops a server while writes are in flight. Under heavy
// load hashicorp/raft's shutdown can wait for good on a leader's
// replication pipeline (netPipeline.AppendEntries blocks once the
// pipeline's response decoder has nobody left to hand responses to):
// seen once in a full -race run of this package. The test then goes on
// with the other servers; the stuck server holds only goroutines and its
// ports until the test binary exits.
func killServer(t *testing.T, s *Server) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.Shutdown() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("kill %s: %v", s.config.NodeName, err)
		}
	case <-time.After(60 * time.Second):
		t.Logf("%s: Raft shutdown is stuck in a replication pipeline; going on without it", s.config.NodeName)
	}
}

// waitForLeaderIn waits for a leader among the live servers.
func waitForLeaderIn(t *testing.T, live *liveServers) *Server {
	t.Helper()
	live.mu.Lock()
	list := append([]*Server(nil), live.list...)
	live.mu.Unlock()
	return waitForLeader(t, list...)
}

// keyedWrites is one run of clients' keyed writes across leader changes:
// what the clients had acknowledged, and how often they retried.
type keyedWrites struct {
	live *liveServers
	// acked maps what identifies each acknowledged write to what its
	// answer named; each test's write function fills it.
	acked    sync.Map
	nAcked   atomic.Int64
	nRetried atomic.Int64
}

// call sends method to any live server until it is answered, as the
// agent retries a keyed write: on errors that mean no leader or a lost
// connection, for up to 120 s. args is called for each attempt's
// request, and reply is zeroed before each attempt.
func (k *keyedWrites) call(method string, args func() any, reply any) error {
	return retry.DoFor(context.Background(), 120*time.Second, func(retried bool) error {
		if retried {
			k.nRetried.Add(1)
		}
		reflect.ValueOf(reply).Elem().SetZero()
		return k.live.pick().RPC(method, args(), reply)
	})
}

// writeAcrossLeaderChanges runs workers clients, each calling write for
// its n-th write (n = 0, 1, …) through any of servers, while the leader
// is stepped down twice and then killed, 30 acknowledged writes apart.
// write returns nil once its write is acknowledged (and recorded in
// acked), or the error that ends the test. It returns the run and the
// servers still up, once 30 more writes were acknowledged after the
// kill and every client stopped; what names the writes in messages.
func writeAcrossLeaderChanges(t *testing.T, servers []*Server, workers int, what string,
	write func(k *keyedWrites, w, n int) error) (*keyedWrites, []*Server) {
	t.Helper()
	k := &keyedWrites{live: &liveServers{list: servers}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := write(k, w, n); err != nil {
					errs <- err
					return
				}
				k.nAcked.Add(1)
			}
		}()
	}
	waitAcked := func(n int64) {
		t.Helper()
		waitFor(t, fmt.Sprintf("%d acknowledged %s", n, what), 120*time.Second, func() error {
			select {
			case err := <-errs:
				t.Fatal(err)
			default:
			}
			if got := k.nAcked.Load(); got < n {
				return fmt.Errorf("%d acknowledged", got)
			}
			return nil
		})
	}

	waitAcked(30)
	for range 2 {
		leader := waitForLeaderIn(t, k.live)
		if err := leader.raft.LeadershipTransfer().Error(); err != nil {
			t.Logf("leadership transfer: %v", err)
		}
		waitAcked(k.nAcked.Load() + 30)
	}
	leader := waitForLeaderIn(t, k.live)
	rest := k.live.remove(leader)
	killServer(t, leader)
	waitForLeader(t, rest...)
	waitAcked(k.nAcked.Load() + 30)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		t.Logf("%d %s acknowledged, %d retried attempts", k.nAcked.Load(), what, k.nRetried.Load())
	})
	return k, rest
}

// checkIdempotencyPurge checks the leader's purge of idempotency records
// in table: with nothing older than the TTL it proposes nothing, and a
// purge past the TTL leaves no record (records reads how many are left).
func checkIdempotencyPurge(t *testing.T, s *Server, table string, records func() int) {
	t.Helper()
	idx := s.fsm.State().Index(table)
	if err := s.purgeCreateRequests(time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := s.fsm.State().Index(table); got != idx {
		t.Fatalf("a purge with nothing old wrote index %d of %s", got, table)
	}
	if err := s.purgeCreateRequests(time.Now().Add(structs.CreateRequestTTL + time.Minute)); err != nil {
		t.Fatal(err)
	}
	if n := records(); n != 0 {
		t.Fatalf("%d records left in %s after the purge", n, table)
	}
}
