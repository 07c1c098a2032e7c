package server

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

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

// simAgent is a cheap stand-in for an agent: its own memberlist on a
// loopback port, configured exactly as a real agent on 127.0.0.1
// configures it, and one host registered under its member name.
type simAgent struct {
	name string
	pool *gossip.Pool
	host string
}

// startSimAgent joins the pool through join and registers its host
// through srv, as an agent does at start.
func startSimAgent(srv *Server, join string, i int) (*simAgent, error) {
	name := fmt.Sprintf("sim-agent-%05d", i)
	pool, err := gossip.New(gossip.Config{
		NodeName: name,
		BindAddr: "127.0.0.1",
		// What agent.startClientGossip sets for an agent bound to loopback.
		Fast:   true,
		Logger: hclog.NewNullLogger(),
		Meta: gossip.Meta{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Role: gossip.RoleClient,
			Region: srv.config.Region, AZ: "nova"},
	})
	if err != nil {
		return nil, err
	}
	a := &simAgent{name: name, pool: pool, host: fmt.Sprintf("sim-host-%05d", i)}
	// Agents retry a failed join (gossip.Pool.RetryJoin, every second);
	// under the load of a thousand members starting, some time out.
	for attempt := 1; ; attempt++ {
		_, err := pool.Join([]string{join})
		if err == nil {
			break
		}
		if attempt == 30 {
			_ = pool.Shutdown()
			return nil, err
		}
		time.Sleep(time.Second)
	}
	h := testHost(a.host, 16, 65536)
	h.GossipMember = name
	// Agents retry registration too, e.g. across a leader election.
	for attempt := 1; ; attempt++ {
		err := srv.RPC("Host.Register", &structs.HostRegisterRequest{Host: h}, &structs.HostRegisterResponse{})
		if err == nil {
			break
		}
		if attempt == 30 {
			_ = pool.Shutdown()
			return nil, fmt.Errorf("register %s: %w", a.host, err)
		}
		time.Sleep(time.Second)
	}
	return a, nil
}

// aliveMembers counts the members s's gossip sees alive.
func aliveMembers(s *Server) int {
	n := 0
	for _, m := range s.Gossip().Members() {
		if m.Status == gossip.StatusAlive {
			n++
		}
	}
	return n
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
// cluster, each with a host registered. It then kills agents one at a
// time — memberlist Shutdown without a leave, as a crash — and measures
// the time until the agent's host is down in every server's replicated
// state (p50/p99 over STRATUS_BENCH_KILLS kills, default 10). It also
// measures a new agent → its host up (schedulable) on every server.
// The agents heartbeat as real ones do (every half TTL, the default 10 s
// TTL), so a death gossip misses is still caught by the TTL, and a host
// gossip wrongly declared dead under load comes back up.
func BenchmarkHostDeath(b *testing.B) {
	members := benchSize("STRATUS_BENCH_MEMBERS", 1000, 50)
	kills := benchSize("STRATUS_BENCH_KILLS", 10, 2)
	servers := testCluster(b, 3, func(c *Config) { c.Logger = hclog.NewNullLogger() })
	leader := waitForLeader(b, servers...)
	agents := startSimAgents(b, servers, members)
	live := newHeartbeater(b, servers[0], agents)
	waitFor(b, "every member alive on every server", 10*time.Minute, func() error {
		for _, s := range servers {
			if n := aliveMembers(s); n != members+len(servers) {
				return fmt.Errorf("%s sees %d alive, want %d", s.config.NodeName, n, members+len(servers))
			}
		}
		return nil
	})
	b.ResetTimer()
	var deaths, joins []time.Duration
	next := 0
	for i := 0; i < b.N; i++ {
		for k := 0; k < kills; k++ {
			// A host already down (gossip wrongly declared its agent dead
			// under load) would measure nothing: kill one that is up.
			for next < len(agents) && !hostStatusEverywhere(servers, agents[next].host, structs.HostStatusUp) {
				next++
			}
			if next >= len(agents) {
				b.Fatalf("ran out of live agents to kill")
			}
			a := agents[next]
			next++
			live.remove(a.host)
			start := time.Now()
			_ = a.pool.Shutdown()
			waitFor(b, a.host+" down", 2*time.Minute, func() error {
				if !hostStatusEverywhere(servers, a.host, structs.HostStatusDown) {
					return fmt.Errorf("not down on every server")
				}
				return nil
			})
			deaths = append(deaths, time.Since(start))
		}
		start := time.Now()
		a, err := startSimAgent(servers[i%len(servers)], leader.Gossip().Addr(), members+i)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = a.pool.Shutdown() })
		live.add(a.host)
		waitFor(b, a.host+" up", 2*time.Minute, func() error {
			if !hostStatusEverywhere(servers, a.host, structs.HostStatusUp) {
				return fmt.Errorf("not up on every server")
			}
			return nil
		})
		joins = append(joins, time.Since(start))
	}
	b.StopTimer()
	falseDowns := 0
	for _, a := range agents[next:] {
		if h, _ := leader.fsm.State().HostByID(nil, a.host); h == nil || h.Status != structs.HostStatusUp {
			falseDowns++
		}
	}
	p50, p99 := percentiles(deaths)
	b.ReportMetric(float64(members), "members")
	b.ReportMetric(p50.Seconds(), "death-p50-s")
	b.ReportMetric(p99.Seconds(), "death-p99-s")
	jp50, jp99 := percentiles(joins)
	b.ReportMetric(jp50.Seconds(), "join-p50-s")
	b.ReportMetric(float64(falseDowns), "false-downs")
	b.Logf("%d members: host down after a crash p50 %v p99 %v (%d kills); new agent schedulable p50 %v p99 %v; %d live hosts wrongly down",
		members, p50, p99, len(deaths), jp50, jp99, falseDowns)
}

// heartbeater sends Host.Heartbeat for every live simulated host every
// half TTL, as each agent does for its own hosts, in one request.
type heartbeater struct {
	mu    sync.Mutex
	hosts map[string]bool
}

func newHeartbeater(b *testing.B, srv *Server, agents []*simAgent) *heartbeater {
	h := &heartbeater{hosts: map[string]bool{}}
	for _, a := range agents {
		h.hosts[a.host] = true
	}
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

// startSimAgents starts n simulated agents, spread over the servers,
// 8 at a time, and shuts them down when the benchmark ends.
func startSimAgents(b *testing.B, servers []*Server, n int) []*simAgent {
	b.Helper()
	agents := make([]*simAgent, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			srv := servers[i%len(servers)]
			a, err := startSimAgent(srv, srv.Gossip().Addr(), i)
			if err != nil {
				errs <- err
				return
			}
			agents[i] = a
		}(i)
	}
	wg.Wait()
	b.Cleanup(func() {
		var wg sync.WaitGroup
		for _, a := range agents {
			if a != nil {
				wg.Add(1)
				go func() { defer wg.Done(); _ = a.pool.Shutdown() }()
			}
		}
		wg.Wait()
	})
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
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
