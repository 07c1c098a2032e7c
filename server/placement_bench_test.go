package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/internal/benchprof"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// Bounds of BenchmarkClusterPlacement's waits: it fails with a message
// that says what it waited for, never hangs.
const (
	// benchCallTimeout bounds one Instance.Create call, retries included.
	benchCallTimeout = 2 * time.Minute
	// benchStallTimeout is how long the evaluations may make no progress
	// at all before the benchmark gives up.
	benchStallTimeout = 2 * time.Minute
	// benchRoundTimeout bounds a whole round's wait for its evaluations.
	benchRoundTimeout = 10 * time.Minute
)

// BenchmarkClusterPlacement places instances on simulated hosts through
// the whole server path — Instance.Create over RPC, Raft, the eval
// broker, scheduler workers on all three servers, the plan applier — and
// then checks that no host is overcommitted and that every host's usage
// equals its allocations. Requests carry 100 instances each, as Nova's
// multi-create does. It reports placements/s.
//
// Sizes: STRATUS_BENCH_HOSTS (1,000; 100 under STRATUS_BENCH_SMALL) and
// STRATUS_BENCH_REQUESTS per round (100, so 10,000 instances; 10 small).
// The servers run with Raft's timeouts ×5 (STRATUS_BENCH_RAFT_SCALE):
// three servers share the machine's cores with their clients, and a
// starved heartbeat must not cost the leadership mid-run. A leader lost
// anyway shows as latency: creates carry idempotency keys and are sent
// again, and the evaluations finish under the next leader.
func BenchmarkClusterPlacement(b *testing.B) {
	// servers=3 is the real thing. servers=1 shows what the same path
	// reaches when one process does not have to apply every entry three
	// times on the machine's two cores.
	for _, n := range []int{3, 1} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) { benchPlacement(b, n) })
	}
}

// placementBench is one benchmark's cluster and its counters.
type placementBench struct {
	servers    []*Server
	perRequest int
	requests   int
	// retries counts creates sent again after a leader change.
	retries atomic.Int64
	// created counts the creates answered; afterCreate, when set, is
	// called with that count after each (tests change the leader there).
	created     atomic.Int64
	afterCreate func(created int64)
}

func benchPlacement(b *testing.B, numServers int) {
	hosts := benchSize("STRATUS_BENCH_HOSTS", 1000, 100)
	scale := 5.0
	if v, err := strconv.ParseFloat(os.Getenv("STRATUS_BENCH_RAFT_SCALE"), 64); err == nil && v > 0 {
		scale = v
	}
	pb := &placementBench{perRequest: 100, requests: benchSize("STRATUS_BENCH_REQUESTS", 100, 10)}
	pb.servers = testCluster(b, numServers, func(c *Config) {
		c.Logger = hclog.NewNullLogger()
		c.HeartbeatTTL = time.Hour
		c.RaftTimeScale = scale
	})
	pb.seedFlavors(b)
	pb.registerHosts(b, hosts)
	stopProfile := benchprof.Start(b, "") // the timed rounds alone
	b.ResetTimer()
	var placed int
	var elapsed, cpu time.Duration
	var entries, allocated uint64
	for n := 0; n < b.N; n++ {
		start, cpuStart, indexStart, allocStart := time.Now(), processCPU(), pb.raftIndex(), bytesAllocated()
		all, evals, err := pb.round(n)
		if err != nil {
			b.Fatalf("round %d: %v", n, err)
		}
		pb.waitEvalsDone(b, evals)
		elapsed += time.Since(start)
		cpu += processCPU() - cpuStart
		entries += pb.raftIndex() - indexStart
		allocated += bytesAllocated() - allocStart
		placed += pb.countPlaced(b, all)
	}
	b.StopTimer()
	stopProfile()
	b.ReportMetric(float64(placed)/elapsed.Seconds(), "placements/s")
	// The wall-clock rate depends on the machine's other load; the CPU
	// the whole cluster spent per placement (clients included) depends
	// on the code.
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(placed, 1)), "cpu-µs/placement")
	b.ReportMetric(float64(entries)/float64(max(placed, 1))*100, "raft-entries/100-placements")
	// Bytes allocated per placement (the whole cluster's) is what the
	// garbage collector has to reclaim: its share of the CPU follows it.
	b.ReportMetric(float64(allocated)/float64(max(placed, 1)), "alloc-B/placement")
	b.ReportMetric(float64(pb.retries.Load()), "create-retries")
	pb.checkNoOvercommit(b)
}

// processCPU is the CPU time this process (the whole cluster) has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bytesAllocated is the heap bytes this process has allocated so far.
func bytesAllocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// seedFlavors writes the dev flavors, retried for a while: a new cluster
// may refuse calls until its leader is settled.
func (pb *placementBench) seedFlavors(b testing.TB) {
	waitFor(b, "the dev flavors written", time.Minute, func() error {
		return waitForLeader(b, pb.servers...).RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()}, &structs.FlavorUpsertResponse{})
	})
}

// registerHosts registers hosts with room for 64 m1.tiny each (16 cores
// × ratio 4, 64 GiB), spread over the servers.
func (pb *placementBench) registerHosts(b testing.TB, hosts int) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	errs := make(chan error, hosts)
	for i := 0; i < hosts; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			h := testHost(fmt.Sprintf("sim-%05d", i), 16, 65536)
			h.Inventories[structs.ResourceVCPU].AllocationRatio = 4
			s := pb.servers[i%len(pb.servers)]
			err := pb.retry(fmt.Sprintf("register %s", h.ID), func() error {
				return s.RPC("Host.Register", &structs.HostRegisterRequest{Host: h}, &structs.HostRegisterResponse{})
			})
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// round sends the round's creates from 16 concurrent clients spread over
// the servers and returns the instances and evaluations they created.
// The first error stops the round; it never waits for a client that
// gave up.
func (pb *placementBench) round(n int) (all, evals []string, err error) {
	const concurrency = 16
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				resp, err := pb.create(n, r, w)
				if err == nil && pb.afterCreate != nil {
					pb.afterCreate(pb.created.Add(1))
				}
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
					cancel()
				} else {
					all = append(all, ids(resp)...)
					evals = append(evals, resp.EvalID)
				}
				mu.Unlock()
			}
		}()
	}
produce:
	for r := 0; r < pb.requests; r++ {
		select {
		case work <- r:
		case <-ctx.Done():
			break produce
		}
	}
	close(work)
	wg.Wait()
	return all, evals, firstErr
}

// create sends one 100-instance create, again (to the next server) while
// the cluster has no leader, with an idempotency key so that a create
// whose answer a leader change lost is not made twice.
func (pb *placementBench) create(n, r, w int) (*structs.InstanceCreateResponse, error) {
	req := &structs.InstanceCreateRequest{
		Name: fmt.Sprintf("b%d-%d", n, r), FlavorID: "m1.tiny", ImageID: "cirros", Count: pb.perRequest,
		IdempotencyKey: fmt.Sprintf("placement-bench-%d-%d", n, r),
	}
	var resp *structs.InstanceCreateResponse
	attempt := 0
	err := pb.retry("create "+req.Name, func() error {
		s := pb.servers[(w+r+attempt)%len(pb.servers)]
		attempt++
		out := &structs.InstanceCreateResponse{}
		if err := s.RPC("Instance.Create", req, out); err != nil {
			return err
		}
		resp = out
		return nil
	})
	return resp, err
}

// retry runs call until it succeeds, fails for a reason other than the
// leader (none, lost, changing), or benchCallTimeout passes. A call that
// itself does not return within the bound fails the retry, so no caller
// waits forever.
func (pb *placementBench) retry(what string, call func() error) error {
	deadline := time.Now().Add(benchCallTimeout)
	for {
		done := make(chan error, 1)
		go func() { done <- call() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Until(deadline)):
			return fmt.Errorf("%s: no answer within %s", what, benchCallTimeout)
		}
		if err == nil {
			return nil
		}
		if !leaderTrouble(err) {
			return fmt.Errorf("%s: %w", what, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: still no leader after %s: %w", what, benchCallTimeout, err)
		}
		pb.retries.Add(1)
		time.Sleep(100 * time.Millisecond) // a client's backoff
	}
}

// leaderTrouble reports whether err means the request met no leader, a
// lost leadership or a lost connection: worth sending again.
func leaderTrouble(err error) bool {
	if rpc.IsConnError(err) || errors.Is(err, structs.ErrNoLeader) {
		return true
	}
	switch structs.KindOf(err) {
	case structs.KindNoLeader, structs.KindUnavailable:
		return true
	}
	return false
}

// raftIndex is the highest last Raft index among the servers.
func (pb *placementBench) raftIndex() uint64 {
	var index uint64
	for _, s := range pb.servers {
		index = max(index, s.raft.LastIndex())
	}
	return index
}

// leader is the current leader, or nil while there is none.
func (pb *placementBench) leader() *Server {
	for _, s := range pb.servers {
		if s.IsLeader() {
			return s
		}
	}
	return nil
}

// waitEvalsDone waits until every evaluation is complete or failed: then
// each of its instances has a host or a NoValidHost fault. Polling the
// evaluations, not the 10,000 instances, keeps the observer cheap. It
// fails when no evaluation finished for benchStallTimeout, or the round
// took benchRoundTimeout, saying what is still pending and where.
func (pb *placementBench) waitEvalsDone(b testing.TB, evals []string) {
	b.Helper()
	start := time.Now()
	deadline := start.Add(benchRoundTimeout)
	pending, progress := len(evals)+1, start
	for {
		left, first := pb.pendingEvals(evals)
		if left == 0 {
			return
		}
		if left < pending {
			pending, progress = left, time.Now()
		}
		if now := time.Now(); now.Sub(progress) > benchStallTimeout || now.After(deadline) {
			b.Fatalf("%d of %d evaluations still pending after %s (none finished for %s; first %s); %s",
				left, len(evals), now.Sub(start).Round(time.Second), now.Sub(progress).Round(time.Second), first, pb.describe())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pendingEvals counts evaluations not yet terminal in the state of one
// server (the leader's, or any while there is none).
func (pb *placementBench) pendingEvals(evals []string) (int, string) {
	s := pb.leader()
	if s == nil {
		s = pb.servers[0]
	}
	state := s.fsm.State()
	left, first := 0, ""
	for _, id := range evals {
		ev, err := state.EvalByID(nil, id)
		if err != nil || ev == nil || !ev.Terminal() {
			if first == "" {
				first = id
			}
			left++
		}
	}
	return left, first
}

// describe tells where the cluster stands, for a failure's message.
func (pb *placementBench) describe() string {
	l := pb.leader()
	if l == nil {
		return "no leader"
	}
	ready, unacked := l.evalBroker.Stats()
	return fmt.Sprintf("leader %s: broker %d ready, %d unacked; plan queue %d; %d creates sent again",
		l.config.NodeName, ready, unacked, len(l.planQueue), pb.retries.Load())
}

// countPlaced counts the instances that got a host, and fails the
// benchmark if any is still waiting for one.
func (pb *placementBench) countPlaced(b testing.TB, ids []string) int {
	b.Helper()
	s := pb.leader()
	if s == nil {
		s = pb.servers[0]
	}
	placed := 0
	for _, id := range ids {
		inst, err := s.fsm.State().InstanceByID(nil, id)
		if err != nil || inst == nil {
			b.Fatalf("instance %s: %v", id, err)
		}
		switch {
		case inst.HostID != "":
			placed++
		case inst.VMState == structs.VMStateBuilding:
			b.Fatalf("instance %s still scheduling after its evaluation finished", id)
		}
	}
	return placed
}

// checkNoOvercommit checks, on every server, that no host holds more
// than its capacity and that every host's usage equals the sum of its
// allocations.
func (pb *placementBench) checkNoOvercommit(b testing.TB) {
	b.Helper()
	for _, s := range pb.servers {
		if err := checkUsage(s); err != nil {
			b.Fatalf("%s: %v", s.config.NodeName, err)
		}
	}
}

// checkUsage compares one snapshot's hosts and allocations: two reads of
// the live store can straddle a plan being applied.
func checkUsage(s *Server) error {
	st := s.fsm.State().Snapshot()
	hosts, err := st.Hosts(nil)
	if err != nil {
		return err
	}
	allocs, err := st.Allocations(nil)
	if err != nil {
		return err
	}
	used := map[string]map[string]int64{}
	for _, a := range allocs {
		if a.Terminal() {
			continue
		}
		if used[a.HostID] == nil {
			used[a.HostID] = map[string]int64{}
		}
		for c, n := range a.Resources {
			used[a.HostID][c] += n
		}
	}
	for _, h := range hosts {
		for class, inv := range h.Inventories {
			if used[h.ID][class] > inv.Capacity() {
				return fmt.Errorf("host %s overcommitted on %s: %d > %d", h.ID, class, used[h.ID][class], inv.Capacity())
			}
			if used[h.ID][class] != h.Usage[class] {
				return fmt.Errorf("host %s usage %d disagrees with its allocations %d on %s", h.ID, h.Usage[class], used[h.ID][class], class)
			}
		}
	}
	return nil
}
