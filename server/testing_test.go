package server

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

var nodeSeq atomic.Int64

// testServer starts a server on random loopback ports in a temp dir.
func testServer(t testing.TB, tweak func(*Config)) *Server {
	t.Helper()
	n := nodeSeq.Add(1)
	level := hclog.Warn
	if os.Getenv("STRATUS_TEST_LOG") != "" {
		level = hclog.Debug
	}
	cfg := &Config{
		NodeName:        fmt.Sprintf("s%d", n),
		NodeID:          fmt.Sprintf("00000000-0000-0000-0000-%012d", n),
		DataDir:         t.TempDir(),
		BindAddr:        "127.0.0.1",
		BootstrapExpect: 1,
		GossipFast:      true,
		Logger:          hclog.New(&hclog.LoggerOptions{Name: fmt.Sprintf("s%d", n), Level: level}),
	}
	if tweak != nil {
		tweak(cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() { _ = s.Shutdown() })
	return s
}

// testCluster starts n servers that bootstrap together through gossip.
func testCluster(t testing.TB, n int, tweak func(*Config)) []*Server {
	t.Helper()
	first := testServer(t, func(c *Config) {
		c.BootstrapExpect = n
		if tweak != nil {
			tweak(c)
		}
	})
	servers := []*Server{first}
	for i := 1; i < n; i++ {
		servers = append(servers, testServer(t, func(c *Config) {
			c.BootstrapExpect = n
			c.Join = []string{first.Gossip().Addr()}
			if tweak != nil {
				tweak(c)
			}
		}))
	}
	waitForLeader(t, servers...)
	return servers
}

// minWait is the shortest wait waitFor allows. Every wait here is an
// upper bound on a condition that must eventually hold, never a speed
// check (speed lives in benchmarks), and under `go test -race` with
// every package running at once on two cores a server can be starved for
// seconds: TestEvalSurvivesLeaderChange's 10 s and
// TestRestartedServerCatchesUpFromSnapshot's 20 s waits both timed out
// that way while the code under test was fine.
const minWait = 60 * time.Second

// waitFor polls cond until it holds or the deadline (at least minWait)
// passes.
func waitFor(t testing.TB, what string, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(max(timeout, minWait))
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitForLeader waits until exactly one of servers leads and all of them
// agree on it and on the peer count; it returns the leader.
func waitForLeader(t testing.TB, servers ...*Server) *Server {
	t.Helper()
	var leader *Server
	waitFor(t, "a leader", 20*time.Second, func() error {
		leader = nil
		for _, s := range servers {
			if s.IsLeader() {
				if leader != nil {
					return fmt.Errorf("two leaders")
				}
				leader = s
			}
		}
		if leader == nil {
			return fmt.Errorf("no leader")
		}
		for _, s := range servers {
			addr, _ := s.raft.LeaderWithID()
			if string(addr) != leader.RPCAddr() {
				return fmt.Errorf("%s sees leader %q", s.config.NodeName, addr)
			}
		}
		return nil
	})
	return leader
}

func upsertFlavor(t testing.TB, s *Server, id string) uint64 {
	t.Helper()
	var resp structs.FlavorUpsertResponse
	err := s.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{
		{ID: id, Name: "f-" + id, VCPUs: 1, MemoryMB: 128, RootGB: 1, IsPublic: true},
	}}, &resp)
	if err != nil {
		t.Fatalf("upsert flavor %s via %s: %v", id, s.config.NodeName, err)
	}
	return resp.Index
}
