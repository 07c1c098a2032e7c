package server

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/structs"
)

// heartbeats tracks, on the leader, when each host was last heard from.
// It is leader memory only: a new leader starts every host with a fresh
// TTL rather than trusting timestamps written by another clock.
type heartbeats struct {
	mu       sync.Mutex
	deadline map[string]time.Time
	ttl      time.Duration

	// downMu guards downs: gossip members reported failed or gone whose
	// hosts are still to be marked down. downWake (capacity 1) wakes
	// memberDownLoop, which takes them all at once, so members that fail
	// together cost one Raft entry and the gossip event loop never waits
	// for Raft.
	downMu   sync.Mutex
	downs    map[string]bool
	downWake chan struct{}
	// exited are members whose agent's RPC session closed (agent_exit.go),
	// to be confirmed by their port refusing, whatever gossip says yet.
	exited map[string]bool
	// held are members gossip declared failed that were not confirmed
	// gone (their port still accepted a connection). memberDownLoop
	// checks them again every heldRecheckInterval, so one that crashes
	// while gossip still has it dead is not left to the TTL.
	held map[string]bool
}

func newHeartbeats(ttl time.Duration) *heartbeats {
	return &heartbeats{deadline: map[string]time.Time{}, ttl: ttl,
		downs: map[string]bool{}, downWake: make(chan struct{}, 1), held: map[string]bool{},
		exited: map[string]bool{}}
}

// hold records members to check again.
func (h *heartbeats) hold(members []string) {
	h.downMu.Lock()
	for _, m := range members {
		h.held[m] = true
	}
	h.downMu.Unlock()
}

// heldRecheckInterval is how often members gossip declared failed but
// that were not confirmed gone are checked again.
const heldRecheckInterval = time.Second

// requeueHeld queues every held member for another check, forgetting
// those the pool sees alive again (or has forgotten).
func (h *heartbeats) requeueHeld(pool *gossip.Pool) {
	h.downMu.Lock()
	var again []string
	for name := range h.held {
		delete(h.held, name)
		if m, ok := pool.Member(name); ok && (m.Status == gossip.StatusDead || m.Status == gossip.StatusLeft) {
			again = append(again, name)
		}
	}
	h.downMu.Unlock()
	for _, name := range again {
		h.queueDown(name)
	}
}

// queueDown adds a member whose hosts are to be marked down.
func (h *heartbeats) queueDown(member string) {
	h.downMu.Lock()
	h.downs[member] = true
	h.downMu.Unlock()
	select {
	case h.downWake <- struct{}{}:
	default:
	}
}

// queueExited adds members whose agent's session closed, to be checked.
func (h *heartbeats) queueExited(members []string) {
	if len(members) == 0 {
		return
	}
	h.downMu.Lock()
	for _, m := range members {
		h.exited[m] = true
	}
	h.downMu.Unlock()
	select {
	case h.downWake <- struct{}{}:
	default:
	}
}

// takeDowns returns and forgets the queued members: those gossip
// declared failed or gone, and those whose session closed.
func (h *heartbeats) takeDowns() (downs, exited map[string]bool) {
	h.downMu.Lock()
	defer h.downMu.Unlock()
	downs, exited = h.downs, h.exited
	h.downs, h.exited = map[string]bool{}, map[string]bool{}
	return downs, exited
}

// reset gives hostID a new deadline and returns the TTL it was given:
// the configured one, or longer when more hosts are tracked than
// maxRate heartbeats a second cover at it (agents beat every half TTL).
func (h *heartbeats) reset(hostID string, maxRate float64) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	ttl := scaledTTL(h.ttl, len(h.deadline), maxRate)
	h.deadline[hostID] = time.Now().Add(ttl)
	return ttl
}

// scaledTTL is the TTL that keeps hosts heartbeating every half TTL at
// no more than maxRate heartbeats a second together, and at least min.
func scaledTTL(min time.Duration, hosts int, maxRate float64) time.Duration {
	if maxRate <= 0 {
		return min
	}
	return max(min, time.Duration(2*float64(hosts)/maxRate*float64(time.Second)).Round(time.Second))
}

// resetWith gives hostID a deadline ttl from now.
func (h *heartbeats) resetWith(hostID string, ttl time.Duration) {
	h.mu.Lock()
	h.deadline[hostID] = time.Now().Add(ttl)
	h.mu.Unlock()
}

// expired returns and forgets hosts whose deadline passed.
func (h *heartbeats) expired(now time.Time) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for id, d := range h.deadline {
		if now.After(d) {
			out = append(out, id)
			delete(h.deadline, id)
		}
	}
	return out
}

// retry re-arms hosts whose down-marking failed, so the next tick after
// now tries again (unless a heartbeat resets them first).
func (h *heartbeats) retry(hostIDs []string, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range hostIDs {
		if _, ok := h.deadline[id]; !ok {
			h.deadline[id] = now
		}
	}
}

func (h *heartbeats) clear() {
	h.mu.Lock()
	h.deadline = map[string]time.Time{}
	h.mu.Unlock()
	h.downMu.Lock()
	h.held = map[string]bool{}
	h.exited = map[string]bool{}
	h.downMu.Unlock()
}

// setHostStatus commits hosts' liveness.
func (s *Server) setHostStatus(ids []string, status string) (uint64, error) {
	return s.apply(structs.HostStatusUpdateType, &structs.HostStatusUpdateEntry{
		HostIDs: ids, Status: status, UpdatedAt: time.Now().UnixNano(),
	})
}

// hostLiveness runs on the leader: it marks hosts down when their
// heartbeat TTL expires. Gossip usually notices first (hostsOfMember).
func (s *Server) hostLiveness(stopCh chan struct{}) {
	state := s.fsm.State()
	hosts, err := state.Hosts(nil)
	if err != nil {
		s.logger.Error("liveness: read hosts", "error", err)
	}
	for _, h := range hosts {
		if h.Up() {
			// The agents may have been given the largest TTL the old
			// leader computed: start every host with that.
			s.heartbeats.resetWith(h.ID, scaledTTL(s.config.HeartbeatTTL, len(hosts), s.config.MaxHeartbeatsPerSecond))
		}
	}
	s.markMembersHostsDown()
	tick := time.NewTicker(s.config.HeartbeatTTL / 10)
	defer tick.Stop()
	for {
		select {
		case <-stopCh:
			s.heartbeats.clear()
			return
		case now := <-tick.C:
			var down []string
			for _, id := range s.heartbeats.expired(now) {
				if h, _ := s.fsm.State().HostByID(nil, id); h != nil && h.Up() {
					down = append(down, id)
				}
			}
			if len(down) > 0 {
				s.logger.Warn("hosts missed their heartbeat; marking them down", "hosts", len(down))
				if _, err := s.setHostStatus(down, structs.HostStatusDown); err != nil {
					// expired forgot them: re-arm, or a failed commit (an
					// election, a starved leader) would leave them up.
					s.logger.Error("mark hosts down; will retry", "hosts", len(down), "error", err)
					s.heartbeats.retry(down, now)
				} else {
					s.downs.ttl.Add(uint64(len(down)))
				}
			}
		}
	}
}

// onMemberDown queues the hosts an agent runs to be marked down, as
// soon as gossip declares the agent failed or gone.
func (s *Server) onMemberDown(name string) {
	// Our own leave is a shutdown: the next leader marks our hosts down
	// when it sees us gone.
	if !s.IsLeader() || name == s.config.NodeName {
		return
	}
	s.heartbeats.queueDown(name)
}

// memberDownLoop marks down, in one Raft entry per batch, the hosts of
// the members onMemberDown and Host.AgentExited queued: those queued
// while an entry is being committed go together in the next. A member
// gossip declared failed is first confirmed gone
// (gossip.Pool.ConfirmGone): a live agent that was only slow to answer
// probes keeps its hosts up, and its heartbeats (or their TTL, if it has
// stopped) decide. A member whose session closed is confirmed exited
// (gossip.Pool.ConfirmExited) only if its port refuses.
func (s *Server) memberDownLoop() {
	defer s.wg.Done()
	recheck := time.NewTicker(heldRecheckInterval)
	defer recheck.Stop()
	var dropped uint64
	for {
		select {
		case <-s.shutdownCh:
			return
		case <-recheck.C:
			s.heartbeats.requeueHeld(s.gossip)
			// A full event buffer drops the oldest events, a failure
			// among them: look at every member again.
			if d := s.gossip.DroppedEvents(); d != dropped && s.IsLeader() {
				dropped = d
				s.markMembersHostsDown()
			}
			continue
		case <-s.heartbeats.downWake:
		}
		names, exited := s.heartbeats.takeDowns()
		if !s.IsLeader() {
			continue // the next leader catches up (markMembersHostsDown)
		}
		s.markDown(names, exited)
	}
}

// markDown confirms members gossip declared down (names) and members
// whose session closed (exited), and marks the hosts of those confirmed
// down in one Raft entry.
func (s *Server) markDown(names, exited map[string]bool) {
	// Only members with hosts still up need confirming: a catch-up
	// queues every dead member, most long since handled.
	names = s.membersWithUpHosts(names)
	exited = s.membersWithUpHosts(exited)
	gone, held := s.confirmGone(names, s.gossip.ConfirmGone)
	s.heartbeats.hold(held)
	// A member gossip's check confirmed needs no other; one it did not
	// confirm (or never saw fail) is checked for an exit.
	for name := range gone {
		delete(exited, name)
	}
	left, alive := s.confirmGone(exited, s.gossip.ConfirmExited)
	s.downs.exitConfirmed.Add(uint64(len(left)))
	s.downs.exitAlive.Add(uint64(len(alive)))
	// Read again: confirming may have waited seconds for dials, and a
	// host that came back up meanwhile must not be marked down.
	goneIDs, leftIDs := s.upHostsOfMembers(gone), s.upHostsOfMembers(left)
	ids := append(goneIDs, leftIDs...)
	if len(ids) == 0 {
		return
	}
	s.logger.Warn("agents exited or left the gossip pool; marking their hosts down",
		"members", len(gone)+len(left), "exited", len(left), "hosts", len(ids))
	if _, err := s.setHostStatus(ids, structs.HostStatusDown); err != nil {
		// Checked again within heldRecheckInterval while still leader
		// (a new leader catches up by itself); an exited member gossip
		// has not declared dead yet is left to gossip and the TTL.
		s.logger.Error("mark hosts down; will retry", "members", len(gone)+len(left), "error", err)
		s.heartbeats.hold(slices.Collect(maps.Keys(gone)))
		s.heartbeats.hold(slices.Collect(maps.Keys(left)))
		return
	}
	s.downs.gossip.Add(uint64(len(goneIDs)))
	s.downs.exited.Add(uint64(len(leftIDs)))
}

// confirmGone splits members into those confirm confirms and those it
// does not, checking them in parallel (each check may wait for a
// connection timeout).
func (s *Server) confirmGone(names map[string]bool, confirm func(string) bool) (gone map[string]bool, held []string) {
	gone = make(map[string]bool, len(names))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ok := confirm(name)
			mu.Lock()
			if ok {
				gone[name] = true
			} else {
				held = append(held, name)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return gone, held
}

// markMembersHostsDown catches up on gossip failures that happened while
// no leader was listening.
func (s *Server) markMembersHostsDown() {
	for _, m := range s.gossip.Members() {
		if m.Status == gossip.StatusDead || m.Status == gossip.StatusLeft {
			s.onMemberDown(m.Name)
		}
	}
}

// membersWithUpHosts returns those of members that run a host that is
// up, in one pass over the hosts.
func (s *Server) membersWithUpHosts(members map[string]bool) map[string]bool {
	out := make(map[string]bool, len(members))
	if len(members) == 0 {
		return out
	}
	hosts, err := s.fsm.State().Hosts(nil)
	if err != nil {
		return members // confirm them all; upHostsOfMembers reads again
	}
	for _, h := range hosts {
		if members[h.GossipMember] && h.Up() {
			out[h.GossipMember] = true
		}
	}
	return out
}

// upHostsOfMembers returns the hosts that are up and run on one of the
// members, in one pass over the hosts.
func (s *Server) upHostsOfMembers(members map[string]bool) []string {
	if len(members) == 0 {
		return nil
	}
	hosts, err := s.fsm.State().Hosts(nil)
	if err != nil {
		return nil
	}
	var ids []string
	for _, h := range hosts {
		if members[h.GossipMember] && h.Up() {
			ids = append(ids, h.ID)
		}
	}
	return ids
}
