package server

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/structs"
)

// joinTestAgent joins a client gossip member named name to s's pool and
// registers one host for it.
func joinTestAgent(t *testing.T, s *Server, name string) *gossip.Pool {
	t.Helper()
	pool, err := gossip.New(gossip.Config{NodeName: name, BindAddr: "127.0.0.1", Fast: true,
		Logger: hclog.NewNullLogger(), Meta: gossip.Meta{ID: name + "-id", Role: gossip.RoleClient, Region: "global"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Shutdown() })
	if _, err := pool.Join([]string{s.Gossip().Addr()}); err != nil {
		t.Fatal(err)
	}
	h := testHost(name+"-host", 4, 4096)
	h.GossipMember = name
	registerHost(t, s, h)
	return pool
}

func hostStatus(s *Server, id string) string {
	h, _ := s.fsm.State().HostByID(nil, id)
	if h == nil {
		return "missing"
	}
	return h.Status
}

// waitHostsDown waits until the n hosts named by format (with 0..n-1)
// are down on s.
func waitHostsDown(t *testing.T, s *Server, what, format string, n int) {
	t.Helper()
	waitFor(t, what, time.Minute, func() error {
		for i := range n {
			id := fmt.Sprintf(format, i)
			if st := hostStatus(s, id); st != structs.HostStatusDown {
				return fmt.Errorf("%s is %s", id, st)
			}
		}
		return nil
	})
}

// holdSlowAgent joins an agent to s's pool, stops its gossip and holds
// its gossip port open, as an agent alive but too slow to answer probes
// would, and returns its name and the listener holding the port. Another
// process may take the port in the instant between: then it tries again
// with another agent.
func holdSlowAgent(t *testing.T, s *Server) (string, net.Listener) {
	t.Helper()
	var err error
	for attempt := range 5 {
		name := fmt.Sprintf("slow-agent-%d", attempt)
		pool := joinTestAgent(t, s, name)
		port := pool.BindPort()
		_ = pool.Shutdown()
		var ln net.Listener
		if ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			return name, ln
		}
	}
	t.Fatalf("five slow agents' ports were taken before the test could hold them; the last: %v", err)
	return "", nil
}

// TestAgentsDyingTogetherGoDown checks that the hosts of several agents
// that crash at once all go down (the leader batches them), and that an
// agent gossip declares failed while its gossip port still accepts
// connections — alive but too slow to answer probes — keeps its host up
// until its port refuses too.
func TestAgentsDyingTogetherGoDown(t *testing.T) {
	t.Parallel()
	// A TTL far longer than the test: only gossip can mark hosts down.
	s := testServer(t, func(c *Config) { c.HeartbeatTTL = time.Hour })
	waitForLeader(t, s)
	// The slow agent stops answering gossip, but its port stays open.
	slowName, ln := holdSlowAgent(t, s)
	defer ln.Close()
	var dying []*gossip.Pool
	for i := range 3 {
		dying = append(dying, joinTestAgent(t, s, fmt.Sprintf("dying-agent-%d", i)))
	}

	waitFor(t, "gossip to declare the slow agent failed", time.Minute, func() error {
		if m, ok := s.Gossip().Member(slowName); !ok || m.Status != gossip.StatusDead {
			return fmt.Errorf("%s is %+v", slowName, m.Status)
		}
		return nil
	})

	// Its failure event was queued before these: once their hosts are
	// down, the leader has decided about the slow agent's too.
	for _, p := range dying {
		_ = p.Shutdown()
	}
	waitHostsDown(t, s, "the crashed agents' hosts to go down", "dying-agent-%d-host", len(dying))
	if st := hostStatus(s, slowName+"-host"); st != structs.HostStatusUp {
		t.Errorf("the slow agent's host is %s; its port still accepts connections, so it should stay up", st)
	}

	// Now it crashes for good while gossip still has it dead: the leader
	// checks held members again at every liveness tick, well within the
	// hour-long TTL.
	_ = ln.Close()
	waitFor(t, "the slow agent's host to go down once its port refuses", time.Minute, func() error {
		if st := hostStatus(s, slowName+"-host"); st != structs.HostStatusDown {
			return fmt.Errorf("%s-host is %s", slowName, st)
		}
		return nil
	})
}

// TestDroppedGossipEventsCaughtUp checks that an agent's failure whose
// gossip event was dropped (the event buffer overflowed) still takes its
// host down, long before its heartbeat TTL: the leader looks at every
// member again once the pool reports drops.
func TestDroppedGossipEventsCaughtUp(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(c *Config) {
		c.HeartbeatTTL = time.Hour
		c.gossipEventBuffer = 1
	})
	waitForLeader(t, s)
	var agents []*gossip.Pool
	for i := range 3 {
		agents = append(agents, joinTestAgent(t, s, fmt.Sprintf("lost-agent-%d", i)))
	}
	waitFor(t, "the agents' joins consumed", time.Minute, func() error {
		if n := len(s.gossip.Events()); n != 0 {
			return fmt.Errorf("%d events queued", n)
		}
		return nil
	})

	// Stall the event loop on the first failure (it queues the member
	// under downMu), so that the next failures overflow the one-event
	// buffer and one of them is dropped.
	s.heartbeats.downMu.Lock()
	locked := true
	defer func() {
		if locked {
			s.heartbeats.downMu.Unlock()
		}
	}()
	before := s.gossip.DroppedEvents()
	for _, a := range agents {
		_ = a.Shutdown()
	}
	waitFor(t, "gossip to declare the agents failed and drop an event", time.Minute, func() error {
		for i := range agents {
			name := fmt.Sprintf("lost-agent-%d", i)
			if m, ok := s.Gossip().Member(name); !ok || m.Status != gossip.StatusDead {
				return fmt.Errorf("%s is %v", name, m.Status)
			}
		}
		if s.gossip.DroppedEvents() == before {
			return fmt.Errorf("no event dropped yet")
		}
		return nil
	})
	s.heartbeats.downMu.Unlock()
	locked = false

	waitHostsDown(t, s, "every lost agent's host to go down", "lost-agent-%d-host", len(agents))
}

// TestHeartbeatRetryRearmsFailedDownMarks checks that a host whose TTL
// down-marking failed is tried again at the next tick, unless a
// heartbeat arrived meanwhile.
func TestHeartbeatRetryRearmsFailedDownMarks(t *testing.T) {
	h := newHeartbeats(10 * time.Second)
	now := time.Now()
	h.reset("a", 50)
	h.reset("b", 50)
	if got := h.expired(now.Add(time.Minute)); len(got) != 2 {
		t.Fatalf("expired = %v, want a and b", got)
	}
	h.reset("b", 50) // b heartbeats again before the retry
	h.retry([]string{"a", "b"}, now)
	got := h.expired(now.Add(time.Second))
	if len(got) != 1 || got[0] != "a" {
		t.Fatalf("after retry expired = %v, want [a]", got)
	}
}
