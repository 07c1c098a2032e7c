package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// sessionAgent is an agent as the servers see it: a gossip member, a
// registered host, and an RPC session its heartbeats go over.
type sessionAgent struct {
	name, host string
	gossip     *gossip.Pool
	conns      *rpc.ConnPool
}

// startSessionAgent joins a member named name to leader's pool with
// gossip probes too slow to notice anything during a test, and
// registers its host.
func startSessionAgent(t *testing.T, leader *Server, name string) *sessionAgent {
	t.Helper()
	pool, err := gossip.New(gossip.Config{NodeName: name, BindAddr: "127.0.0.1", Fast: true,
		ProbeInterval: time.Hour, Logger: hclog.NewNullLogger(),
		Meta: gossip.Meta{ID: name + "-id", Role: gossip.RoleClient, Region: leader.config.Region}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Shutdown() })
	if _, err := pool.Join([]string{leader.Gossip().Addr()}); err != nil {
		t.Fatal(err)
	}
	a := &sessionAgent{name: name, host: name + "-host", gossip: pool}
	h := testHost(a.host, 4, 4096)
	h.GossipMember = name
	registerHost(t, leader, h)
	return a
}

// heartbeat sends one heartbeat over a new session to via.
func (a *sessionAgent) heartbeat(t *testing.T, via *Server) {
	t.Helper()
	a.conns = rpc.NewConnPool(rpc.PoolConfig{Logger: hclog.NewNullLogger()})
	t.Cleanup(func() { _ = a.conns.Shutdown() })
	req := &structs.HostHeartbeatRequest{HostIDs: []string{a.host}}
	if err := a.conns.RPC(via.RPCAddr(), "Host.Heartbeat", req, &structs.HostRegisterResponse{}); err != nil {
		t.Fatalf("heartbeat %s: %v", a.host, err)
	}
}

// watch asks for its host's allocations over a new session to via, as
// an agent's allocation watch does (without blocking), once via knows
// the host.
func (a *sessionAgent) watch(t *testing.T, via *Server) {
	t.Helper()
	a.conns = rpc.NewConnPool(rpc.PoolConfig{Logger: hclog.NewNullLogger()})
	t.Cleanup(func() { _ = a.conns.Shutdown() })
	req := &structs.AllocHostRequest{HostID: a.host, QueryOptions: structs.QueryOptions{AllowStale: true}}
	waitFor(t, "the allocation watch of "+a.host, time.Minute, func() error {
		return a.conns.RPC(via.RPCAddr(), "Alloc.GetHostAllocs", req, &structs.AllocIndexResponse{})
	})
}

// exitCluster starts three servers whose gossip and heartbeat TTL are
// too slow to notice anything during a test, so only the exit path
// marks hosts down, and returns them with the leader and a follower.
func exitCluster(t *testing.T) (servers []*Server, leader, follower *Server) {
	t.Helper()
	servers = testCluster(t, 3, func(c *Config) {
		c.HeartbeatTTL = time.Hour
		c.gossipProbeInterval = time.Hour
	})
	leader = waitForLeader(t, servers...)
	follower = servers[0]
	if follower == leader {
		follower = servers[1]
	}
	return servers, leader, follower
}

// sessionsNaming counts the sessions s remembers hosts for.
func sessionsNaming(s *Server) int {
	s.sessions.mu.Lock()
	defer s.sessions.mu.Unlock()
	return len(s.sessions.hosts)
}

// TestAgentExitMarksHostDown checks the agent-exit path with gossip and
// the heartbeat TTL both too slow to notice anything during the test: a
// session that closes while its agent lives costs a check and changes
// nothing; once the agent's process is gone (its gossip port refuses
// and its session closes) its host goes down on every server, counted
// as an agent exit. The agent's session is to a follower, whose report
// reaches the leader; the heartbeat the follower forwarded is not taken
// for a session of the leader's own.
func TestAgentExitMarksHostDown(t *testing.T) {
	t.Parallel()
	servers, leader, follower := exitCluster(t)
	a := startSessionAgent(t, leader, "exiting-agent")
	a.heartbeat(t, follower)
	if n := sessionsNaming(follower); n != 1 {
		t.Fatalf("the follower remembers %d sessions naming hosts, want 1", n)
	}
	if n := sessionsNaming(leader); n != 0 {
		t.Fatalf("the leader remembers %d sessions naming hosts, want 0 (it only saw a forwarded call)", n)
	}

	// The session closes, the agent lives: checked, still up.
	_ = a.conns.Shutdown()
	waitFor(t, "the leader to check the agent", time.Minute, func() error {
		if n := leader.AgentExitChecks()["alive"]; n != 1 {
			return fmt.Errorf("%d agents checked alive", n)
		}
		return nil
	})
	if st := hostStatus(leader, a.host); st != structs.HostStatusUp {
		t.Fatalf("host %s is %s after a live agent's session closed", a.host, st)
	}

	// Now the process dies: its port refuses and its session closes.
	a.heartbeat(t, follower)
	_ = a.gossip.Shutdown()
	_ = a.conns.Shutdown()
	waitFor(t, "the exited agent's host down everywhere", time.Minute, func() error {
		if !hostStatusEverywhere(servers, a.host, structs.HostStatusDown) {
			return fmt.Errorf("not down on every server")
		}
		return nil
	})
	if got := leader.HostsMarkedDown(); got["agent_exit"] != 1 || got["gossip"] != 0 || got["heartbeat"] != 0 {
		t.Errorf("hosts marked down = %v, want one agent exit only", got)
	}
	if got := leader.AgentExitChecks(); got["exited"] != 1 {
		t.Errorf("exit checks = %v, want one exited", got)
	}

	// Agents that exit together are reported and marked down together.
	var group []*sessionAgent
	for i := range 4 {
		b := startSessionAgent(t, leader, fmt.Sprintf("exiting-together-%d", i))
		b.heartbeat(t, follower)
		group = append(group, b)
	}
	for _, b := range group {
		_ = b.gossip.Shutdown()
		_ = b.conns.Shutdown()
	}
	waitFor(t, "the agents that exited together down everywhere", time.Minute, func() error {
		for _, b := range group {
			if !hostStatusEverywhere(servers, b.host, structs.HostStatusDown) {
				return fmt.Errorf("%s not down on every server", b.host)
			}
		}
		return nil
	})
	if got := leader.HostsMarkedDown(); got["agent_exit"] != 5 || got["gossip"] != 0 {
		t.Errorf("hosts marked down = %v, want five agent exits", got)
	}
	waitFor(t, "the follower to forget the closed sessions", time.Minute, func() error {
		if n := sessionsNaming(follower); n != 0 {
			return fmt.Errorf("%d sessions remembered", n)
		}
		return nil
	})
}

// TestAgentExitSeenOnTheWatchSession: an agent whose only open session
// is its allocation watch (its heartbeats' session reaped or not yet
// made) is still caught by the exit path when its process dies.
func TestAgentExitSeenOnTheWatchSession(t *testing.T) {
	t.Parallel()
	servers, leader, follower := exitCluster(t)
	a := startSessionAgent(t, leader, "watching-agent")
	a.watch(t, follower)
	if n := sessionsNaming(follower); n != 1 {
		t.Fatalf("the follower remembers %d sessions naming hosts, want 1", n)
	}
	_ = a.gossip.Shutdown()
	_ = a.conns.Shutdown()
	waitFor(t, "the exited agent's host down everywhere", time.Minute, func() error {
		if !hostStatusEverywhere(servers, a.host, structs.HostStatusDown) {
			return fmt.Errorf("not down on every server")
		}
		return nil
	})
	if got := leader.HostsMarkedDown(); got["agent_exit"] != 1 || got["gossip"] != 0 {
		t.Errorf("hosts marked down = %v, want one agent exit", got)
	}
}
