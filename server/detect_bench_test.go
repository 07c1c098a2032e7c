package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/structs"
)

// benchSmall reports whether STRATUS_BENCH_SMALL asks for the small
// sizes make bench-smoke uses.
func benchSmall() bool { return os.Getenv("STRATUS_BENCH_SMALL") != "" }

// benchSize is full, or small under STRATUS_BENCH_SMALL; env, when set
// to a positive integer, overrides both.
func benchSize(env string, full, small int) int {
	if v, err := strconv.Atoi(os.Getenv(env)); err == nil && v > 0 {
		return v
	}
	if benchSmall() {
		return small
	}
	return full
}

// simAgent is a cheap stand-in for an agent: its own gossip member on a
// loopback port, configured exactly as a real agent on 127.0.0.1
// configures it, in this process (pool) or in a child process (proc),
// and one host registered under its member name.
type simAgent struct {
	index int
	name  string
	addr  string
	pool  *gossip.Pool
	proc  *simProc
	host  string
}

// kill stops the agent's gossip member without a leave, as a crash.
func (a *simAgent) kill() error {
	if a.proc != nil {
		return a.proc.kill(a.index)
	}
	return a.pool.Shutdown()
}

// startSimAgent starts simulated agent i in this process, joined through
// join, and registers its host through srv, as an agent does at start.
func startSimAgent(srv *Server, join string, i int) (*simAgent, error) {
	pool, err := startSimMember(i, srv.config.Region, []string{join}, false)
	if err != nil {
		return nil, err
	}
	a := &simAgent{index: i, name: simMemberName(i), addr: pool.Addr(), pool: pool, host: fmt.Sprintf("sim-host-%05d", i)}
	if err := registerSimHost(srv, a); err != nil {
		_ = pool.Shutdown()
		return nil, err
	}
	return a, nil
}

// registerSimHost registers a's host through srv, retrying as agents
// do (e.g. across a leader election).
func registerSimHost(srv *Server, a *simAgent) error {
	h := testHost(a.host, 16, 65536)
	h.GossipMember = a.name
	for attempt := 1; ; attempt++ {
		err := srv.RPC("Host.Register", &structs.HostRegisterRequest{Host: h}, &structs.HostRegisterResponse{})
		if err == nil {
			return nil
		}
		if attempt == 30 {
			return fmt.Errorf("register %s: %w", a.host, err)
		}
		time.Sleep(time.Second)
	}
}

// downsBy sums, over servers, the hosts marked down because their agent
// exited and because gossip declared it failed.
func downsBy(servers []*Server) (exits, gossip uint64) {
	for _, s := range servers {
		d := s.HostsMarkedDown()
		exits += d["agent_exit"]
		gossip += d["gossip"]
	}
	return exits, gossip
}

// aliveMembers counts the members s's gossip sees alive.
func aliveMembers(s *Server) int { return memberStatuses(s)[gossip.StatusAlive] }

// memberStatuses counts the members s's gossip sees in each status.
func memberStatuses(s *Server) map[gossip.Status]int {
	n := map[gossip.Status]int{}
	for _, m := range s.Gossip().Members() {
		n[m.Status]++
	}
	return n
}

// hostsUp counts the hosts up in s's replicated state, and all hosts.
func hostsUp(s *Server) (up, all int) {
	hosts, _ := s.fsm.State().Hosts(nil)
	for _, h := range hosts {
		if h.Up() {
			up++
		}
	}
	return up, len(hosts)
}

// hostStatusEverywhere reports whether every server's replicated state
// has host id with status.
func hostStatusEverywhere(servers []*Server, id, status string) bool {
	for _, s := range servers {
		h, err := s.fsm.State().HostByID(nil, id)
		if err != nil || h == nil || h.Status != status {
			return false
		}
	}
	return true
}

// BenchmarkHostDeath runs 1,000 simulated agents (STRATUS_BENCH_MEMBERS;
// 50 with STRATUS_BENCH_SMALL) in one gossip pool with a 3-server
// cluster, each with a host registered; their gossip members run in
// child processes (simProcs, detect_sim_test.go), the servers in this
// one. Like real agents, the simulated ones each heartbeat their host
// over an RPC session of their own to one of the servers (every half
// TTL, the default 10 s TTL), so a death gossip misses is still caught
// by the TTL, and a host gossip wrongly declared dead under load comes
// back up. The benchmark then kills agents one at a time and measures
// the time until the agent's host is down in every server's replicated
// state (p50/p99 over STRATUS_BENCH_KILLS kills, default 10). A kill is
// a process crash — the member stops without a leave and the session
// closes — which the servers notice by the session (agent_exit.go);
// STRATUS_BENCH_KILL=member keeps the session open and silent, as a host
// that is off or cut off leaves it, so that only gossip can notice. It
// reports how many hosts each path marked down (exit-downs,
// gossip-downs), and also measures a new agent → its host up
// (schedulable) on every server. Every live host seen down while kills
// are measured counts as a false down. (With STRATUS_BENCH_PROCS=0 the
// agents run in this process without sessions: gossip only.)
//
// Knobs for the simulated agents only (the servers keep the real Fast
// timers): STRATUS_BENCH_SIM_PROBE (ms) lengthens their probe interval,
// their probe timeout being half of it; STRATUS_BENCH_SIM_GOSSIP (ms)
// their gossip interval; STRATUS_BENCH_SIM_GOMAXPROCS, _GOGC and _MEMORY
// (MiB, all member processes together) their runtimes. None of them can
// make the figure better than real agents would: a member that hears a
// suspicion times it with its own configuration, so the servers, with
// the Fast timers, still declare the death 1.8 s (at 1,000 members)
// after they hear of it once a second member has confirmed it; fewer or
// slower probers and slower gossip only delay the first suspicion, its
// confirmation and their spread. With these knobs the figure is an upper
// bound for real agents.
func BenchmarkHostDeath(b *testing.B) {
	members := benchSize("STRATUS_BENCH_MEMBERS", 1000, 50)
	kills := benchSize("STRATUS_BENCH_KILLS", 10, 2)
	largePoolDefaults(b, members)
	// Real agents each have their own process and heap; here a thousand
	// share one, whose collector would otherwise run several times a
	// second and stall every member's probes with it.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	servers := testCluster(b, 3, func(c *Config) {
		c.Logger = hclog.NewNullLogger()
		// The servers share this process with the simulated agents, and
		// a thousand of them starve it of CPU at times: Raft's LAN
		// timeouts (500 ms) would then hold elections that a server on
		// its own machine never needs, and registrations would wait for
		// them. Gossip timers are left as an agent has them.
		c.RaftTimeScale = 4
	})
	leader := waitForLeader(b, servers...)
	stopProgress := benchProgress(servers)
	live := newHeartbeater(b, servers[0])
	procs := startSimProcs(b, simProcs(), servers[0].config.Region)
	agents := startSimAgents(b, servers, procs, members, live)
	waitFor(b, "every host up on every server", 10*time.Minute, func() error {
		for _, s := range servers {
			if up, _ := hostsUp(s); up != members {
				return fmt.Errorf("%s has %d hosts up, want %d", s.config.NodeName, up, members)
			}
		}
		return nil
	})
	notAlive := settleGossip(b, servers, members+len(servers), 2*time.Minute)
	stopProgress()
	watch := watchFalseDowns(b, servers[0])
	exitsBefore, gossipBefore := downsBy(servers)
	b.ResetTimer()
	var deaths, joins []time.Duration
	next := 0
	for i := 0; i < b.N; i++ {
		for k := 0; k < kills; k++ {
			// A host already down (gossip wrongly declared its agent dead
			// under load) would measure nothing: kill one that is up.
			a := nextUp(servers, agents, next)
			if a == nil {
				b.Fatalf("ran out of live agents to kill")
			}
			next = a.index + 1
			live.remove(a.host)
			watch.killed(a.host)
			start := time.Now()
			if err := a.kill(); err != nil {
				b.Fatal(err)
			}
			deaths = append(deaths, waitStatusEverywhere(b, servers, a.host, structs.HostStatusDown, start))
		}
		start := time.Now()
		a, err := startSimAgent(servers[i%len(servers)], leader.Gossip().Addr(), members+i)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = a.pool.Shutdown() })
		live.add(a.host)
		joins = append(joins, waitStatusEverywhere(b, servers, a.host, structs.HostStatusUp, start))
	}
	b.StopTimer()
	falseDowns := watch.stop()
	exits, gossipDowns := downsBy(servers)
	b.ReportMetric(float64(exits-exitsBefore), "exit-downs")
	b.ReportMetric(float64(gossipDowns-gossipBefore), "gossip-downs")
	p50, p99 := percentiles(deaths)
	b.ReportMetric(float64(members), "members")
	b.ReportMetric(p50.Seconds(), "death-p50-s")
	b.ReportMetric(p99.Seconds(), "death-p99-s")
	jp50, jp99 := percentiles(joins)
	b.ReportMetric(jp50.Seconds(), "join-p50-s")
	b.ReportMetric(float64(falseDowns), "false-downs")
	b.ReportMetric(float64(notAlive), "not-alive-at-start")
	b.Logf("%d members: host down after a crash p50 %v p99 %v (%d kills); new agent schedulable p50 %v p99 %v; %d live hosts wrongly down; %d live members not alive in some server's gossip view at the start",
		members, p50, p99, len(deaths), jp50, jp99, falseDowns, notAlive)
}

// largePoolKnobs are the simulated agents' settings BenchmarkHostDeath
// uses from largePool members on, each unless its variable is set. With
// the Fast timers, a few hundred members to a process on two cores never
// stayed settled past 300–900 members: a stall of one member process
// (its collector, a join batch) had hundreds of members suspected at
// once, and their refutations, gossiped to every member, were more work
// than the processes got CPU for. 1 s probes settled once in five
// attempts; with 3 s probes (1.5 s probe timeout), one retransmission per
// log10(members), 4 processes of one thread each collecting at 5× their
// live heap, the pool settled through the join to 1,000
// (website/performance.md). A process crash is noticed by its session
// closing, whatever the probes; only STRATUS_BENCH_KILL=member measures
// gossip, and then these settings make the figure an upper bound.
var largePoolKnobs = map[string]string{
	"STRATUS_BENCH_PROCS":          "4",
	"STRATUS_BENCH_SIM_GOMAXPROCS": "1",
	"STRATUS_BENCH_SIM_PROBE":      "3000",
	"STRATUS_BENCH_SIM_GOSSIP":     "200",
	"STRATUS_BENCH_SIM_RETRANSMIT": "1",
	"STRATUS_BENCH_SIM_GOGC":       "400",
	"STRATUS_BENCH_SIM_MEMORY":     "12288",
}

// largePool is the pool size from which largePoolKnobs apply, so that
// the figures at 50–200 members stay comparable with earlier ones.
const largePool = 500

// largePoolDefaults sets, for the benchmark's duration, every knob of
// largePoolKnobs not already set when members reaches largePool; the
// member processes inherit them.
func largePoolDefaults(b *testing.B, members int) {
	if members < largePool {
		return
	}
	for k, v := range largePoolKnobs {
		if _, set := os.LookupEnv(k); !set {
			b.Setenv(k, v)
		}
	}
}

// settleGossip waits up to timeout for every server's gossip to see
// every member alive and returns how many it still did not (the most of
// any server). On a machine busy enough to starve this process, members
// answer probes late and gossip keeps declaring some of them dead until
// they refute it; the servers keep their hosts up (the member is
// confirmed alive first), and the kills below pick members every server
// sees alive, so the benchmark still measures, but the figure says so.
func settleGossip(b *testing.B, servers []*Server, want int, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		worst := 0
		for _, s := range servers {
			worst = max(worst, want-aliveMembers(s))
		}
		if worst == 0 || time.Now().After(deadline) {
			if worst > 0 {
				b.Logf("gossip did not settle: a server sees %d of %d members not alive", worst, want)
			}
			return worst
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitStatusEverywhere waits (up to two minutes) until every server has
// host with status and returns the time since start. It looks every
// 2 ms, as the agent-exit path takes tens of milliseconds.
func waitStatusEverywhere(b *testing.B, servers []*Server, host, status string, start time.Time) time.Duration {
	b.Helper()
	for !hostStatusEverywhere(servers, host, status) {
		if time.Since(start) > 2*time.Minute {
			b.Fatalf("%s not %s on every server after 2 minutes", host, status)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(start)
}

// nextUp returns the first agent from index from on whose member every
// server's gossip sees alive and whose host is up on every server (so its
// death can be measured), or nil.
func nextUp(servers []*Server, agents []*simAgent, from int) *simAgent {
	for _, a := range agents[min(from, len(agents)):] {
		if !hostStatusEverywhere(servers, a.host, structs.HostStatusUp) {
			continue
		}
		alive := true
		for _, s := range servers {
			if m, ok := s.Gossip().Member(a.name); !ok || m.Status != gossip.StatusAlive {
				alive = false
				break
			}
		}
		if alive {
			return a
		}
	}
	return nil
}

// falseDownWatch records every host seen down in one server's replicated
// state that the benchmark did not kill.
type falseDownWatch struct {
	mu     sync.Mutex
	dead   map[string]bool
	wrong  map[string]bool
	cancel context.CancelFunc
	done   chan struct{}
}

// watchFalseDowns starts a falseDownWatch on s's state; it wakes on every
// change of the hosts table, so a host that goes down and comes back up
// between two kills is still counted.
func watchFalseDowns(b *testing.B, s *Server) *falseDownWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &falseDownWatch{dead: map[string]bool{}, wrong: map[string]bool{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for ctx.Err() == nil {
			ws := memdb.NewWatchSet()
			hosts, err := s.fsm.State().Hosts(ws)
			if err != nil {
				return
			}
			w.mu.Lock()
			for _, h := range hosts {
				if !h.Up() && !w.dead[h.ID] {
					w.wrong[h.ID] = true
				}
			}
			w.mu.Unlock()
			_ = ws.WatchCtx(ctx)
		}
	}()
	b.Cleanup(func() { w.stop() })
	return w
}

// killed records that host's agent is about to be killed.
func (w *falseDownWatch) killed(host string) {
	w.mu.Lock()
	w.dead[host] = true
	w.mu.Unlock()
}

// stop ends the watch and returns how many live hosts were seen down.
func (w *falseDownWatch) stop() int {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.wrong)
}

// benchProgress prints, under -test.v, every 5 s how many members each
// server sees alive and how many hosts are up, so a slow join shows
// where it is. The returned function stops it.
func benchProgress(servers []*Server) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Second):
			}
			if !testing.Verbose() {
				continue
			}
			line := fmt.Sprintf("%6.1fs", time.Since(start).Seconds())
			for _, s := range servers {
				up, all := hostsUp(s)
				n := memberStatuses(s)
				line += fmt.Sprintf("  %s: %d alive, %d dead, %d/%d hosts up", s.config.NodeName,
					n[gossip.StatusAlive], n[gossip.StatusDead], up, all)
			}
			var downs [3]uint64
			for _, s := range servers {
				d := s.HostsMarkedDown()
				downs[0], downs[1], downs[2] = downs[0]+d["gossip"], downs[1]+d["agent_exit"], downs[2]+d["heartbeat"]
			}
			line += fmt.Sprintf("  marked down by gossip %d, agent exit %d, heartbeat TTL %d", downs[0], downs[1], downs[2])
			fmt.Fprintln(os.Stderr, line)
		}
	}()
	return func() { close(stop); <-done }
}

// heartbeater sends Host.Heartbeat for every live simulated host every
// half TTL, as each agent does for its own hosts, in one request.
type heartbeater struct {
	mu    sync.Mutex
	hosts map[string]bool
}

func newHeartbeater(b *testing.B, srv *Server) *heartbeater {
	h := &heartbeater{hosts: map[string]bool{}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(srv.config.HeartbeatTTL / 2)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				h.mu.Lock()
				ids := make([]string, 0, len(h.hosts))
				for id := range h.hosts {
					ids = append(ids, id)
				}
				h.mu.Unlock()
				if len(ids) == 0 {
					continue
				}
				// A failed beat (an election) is retried at the next tick.
				_ = srv.RPC("Host.Heartbeat", &structs.HostHeartbeatRequest{HostIDs: ids}, &structs.HostRegisterResponse{})
			}
		}
	}()
	b.Cleanup(func() { close(stop); <-done })
	return h
}

func (h *heartbeater) add(id string) {
	h.mu.Lock()
	h.hosts[id] = true
	h.mu.Unlock()
}

func (h *heartbeater) remove(id string) {
	h.mu.Lock()
	delete(h.hosts, id)
	h.mu.Unlock()
}

// batchSettle bounds the wait for gossip to settle after each batch of
// joins (STRATUS_BENCH_SETTLE, in seconds).
var batchSettle = time.Duration(envInt("STRATUS_BENCH_SETTLE", 30)) * time.Second

// joinBatch is how many simulated agents start before the harness waits
// for gossip to settle (STRATUS_BENCH_JOIN_BATCH overrides it).
func joinBatch() int { return benchSize("STRATUS_BENCH_JOIN_BATCH", 50, 50) }

// simProcs is how many child processes hold the simulated agents'
// gossip members (STRATUS_BENCH_PROCS; 0 runs them in this process).
func simProcs() int {
	if v, err := strconv.Atoi(os.Getenv("STRATUS_BENCH_PROCS")); err == nil && v >= 0 {
		return v
	}
	if benchSmall() {
		return 1
	}
	return 4
}

// startSimAgents starts n simulated agents, 8 at a time, spread over the
// child processes procs (in this process if there are none), registering
// each host through the servers in turn and heartbeating it from then
// on, and shuts them down when the benchmark ends. A real agent joins
// through whichever members it was given; so that the servers do not
// serve every join's full-state exchange, each agent joins through a
// random member that has already joined (then another, then a server, if
// that fails). After every joinBatch agents it
// waits (up to batchSettle) until every server sees every member alive:
// each join is gossiped to every member, and a join storm that saturates
// the machine makes members answer probes late, declared dead and
// refuting it, which is more gossip to every member.
func startSimAgents(b *testing.B, servers []*Server, procs []*simProc, n int, live *heartbeater) []*simAgent {
	b.Helper()
	agents := make([]*simAgent, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	var seedMu sync.Mutex
	var seeds []string
	for _, s := range servers {
		seeds = append(seeds, s.Gossip().Addr())
	}
	b.Cleanup(func() {
		var wg sync.WaitGroup
		for _, a := range agents {
			if a != nil && a.pool != nil {
				wg.Add(1)
				go func() { defer wg.Done(); _ = a.pool.Shutdown() }()
			}
		}
		wg.Wait()
	})
	start := func(i int, seeds []string) (*simAgent, error) {
		srv := servers[i%len(servers)]
		if len(procs) == 0 {
			return startSimAgent(srv, seeds[0], i)
		}
		a := &simAgent{index: i, name: simMemberName(i), proc: procs[i%len(procs)], host: fmt.Sprintf("sim-host-%05d", i)}
		addr, err := a.proc.start(i, seeds, srv.RPCAddr(), a.host)
		if err != nil {
			return nil, err
		}
		a.addr = addr
		if err := registerSimHost(srv, a); err != nil {
			return nil, err
		}
		return a, nil
	}
	for from := 0; from < n; from += joinBatch() {
		var wg sync.WaitGroup
		for i := from; i < min(from+joinBatch(), n); i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func(i int) {
				defer wg.Done()
				defer func() { <-sem }()
				// Like a real agent's join list, several addresses, tried
				// in turn: a member that is slow to answer (or just
				// declared dead) does not hold the join up.
				seedMu.Lock()
				join := []string{seeds[rand.IntN(len(seeds))], seeds[rand.IntN(len(seeds))], seeds[i%len(servers)]}
				seedMu.Unlock()
				a, err := start(i, join)
				if err != nil {
					errs <- err
					return
				}
				if a.proc == nil {
					live.add(a.host) // one in a child heartbeats itself
				}
				seedMu.Lock()
				seeds = append(seeds, a.addr)
				seedMu.Unlock()
				agents[i] = a
			}(i)
		}
		wg.Wait()
		select {
		case err := <-errs:
			b.Fatal(err)
		default:
		}
		settleGossip(b, servers, min(from+joinBatch(), n)+len(servers), batchSettle)
	}
	return agents
}

// percentiles returns the p50 and p99 of samples (nearest rank).
func percentiles(samples []time.Duration) (p50, p99 time.Duration) {
	if len(samples) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), samples...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(p float64) time.Duration { return s[int(p*float64(len(s)-1)+0.5)] }
	return at(0.5), at(0.99)
}
