package server

import (
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
}

func newHeartbeats(ttl time.Duration) *heartbeats {
	return &heartbeats{deadline: map[string]time.Time{}, ttl: ttl}
}

func (h *heartbeats) reset(hostID string) {
	h.mu.Lock()
	h.deadline[hostID] = time.Now().Add(h.ttl)
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

func (h *heartbeats) clear() {
	h.mu.Lock()
	h.deadline = map[string]time.Time{}
	h.mu.Unlock()
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
			s.heartbeats.reset(h.ID)
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
					s.logger.Error("mark hosts down", "error", err)
				}
			}
		}
	}
}

// onMemberDown marks the hosts an agent runs down as soon as gossip
// declares the agent failed or gone.
func (s *Server) onMemberDown(name string) {
	// Our own leave is a shutdown: the next leader marks our hosts down
	// when it sees us gone.
	if !s.IsLeader() || name == s.config.NodeName {
		return
	}
	ids := s.upHostsOfMember(name)
	if len(ids) == 0 {
		return
	}
	s.logger.Warn("agent left the gossip pool; marking its hosts down", "member", name, "hosts", len(ids))
	if _, err := s.setHostStatus(ids, structs.HostStatusDown); err != nil {
		s.logger.Error("mark hosts down", "member", name, "error", err)
	}
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

func (s *Server) upHostsOfMember(name string) []string {
	hosts, err := s.fsm.State().Hosts(nil)
	if err != nil {
		return nil
	}
	var ids []string
	for _, h := range hosts {
		if h.GossipMember == name && h.Up() {
			ids = append(ids, h.ID)
		}
	}
	return ids
}
