package server

import (
	"fmt"
	"sort"
	"time"

	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/gossip"
)

func (s *Server) setupGossip() error {
	pool, err := gossip.New(gossip.Config{
		NodeName:      s.config.NodeName,
		BindAddr:      s.config.BindAddr,
		BindPort:      s.config.GossipPort,
		AdvertiseAddr: s.config.AdvertiseAddr,
		Fast:          s.config.GossipFast,
		EventBuffer:   s.config.gossipEventBuffer,
		ProbeInterval: s.config.gossipProbeInterval,
		SecretKey:     s.config.GossipKey,
		KeyringFile:   s.config.GossipKeyringFile,
		Logger:        s.logger,
		Meta: gossip.Meta{
			ID:       s.config.NodeID,
			Role:     gossip.RoleServer,
			Region:   s.config.Region,
			AZ:       s.config.AZ,
			RPCAddr:  s.RPCAddr(),
			HTTPAddr: s.config.HTTPAddr,
			Expect:   s.config.BootstrapExpect,
			Version:  s.config.Version,
			FSMLevel: int(s.localFSMLevel()),
		},
	})
	if err != nil {
		return fmt.Errorf("start gossip: %w", err)
	}
	s.gossip = pool
	return nil
}

// gossipEventLoop reacts to membership changes: bootstrap when enough
// servers are seen, and wake the leader to reconcile Raft peers.
func (s *Server) gossipEventLoop() {
	defer s.wg.Done()
	s.wg.Add(1)
	go s.memberDownLoop()
	for {
		select {
		case <-s.shutdownCh:
			return
		case ev, ok := <-s.gossip.Events():
			if !ok {
				return
			}
			if ev.Type == gossip.EventFailed || ev.Type == gossip.EventLeave {
				// Any agent may run hosts, servers in dev mode too.
				s.onMemberDown(ev.Member.Name)
			}
			if ev.Member.Meta.Role != gossip.RoleServer || ev.Member.Meta.Region != s.config.Region {
				continue
			}
			s.logger.Debug("server membership event", "event", ev.Type, "member", ev.Member.Name)
			s.fsmGate.observe(ev.Member)
			s.maybeBootstrap()
			select {
			case s.reconcileCh <- struct{}{}:
			default:
			}
		}
	}
}

// maybeBootstrap bootstraps Raft once bootstrap_expect servers of this
// region are alive in gossip and none of them has Raft state. Every
// server computes the same configuration from the same member list.
func (s *Server) maybeBootstrap() {
	s.bootstrapMu.Lock()
	defer s.bootstrapMu.Unlock()
	if s.bootstrapped || s.config.BootstrapExpect == 0 {
		return
	}
	var servers []raft.Server
	for _, m := range s.gossip.Servers(s.config.Region) {
		if m.Meta.Expect != 0 && m.Meta.Expect != s.config.BootstrapExpect {
			s.logger.Error("servers disagree on bootstrap_expect; not bootstrapping",
				"member", m.Name, "theirs", m.Meta.Expect, "ours", s.config.BootstrapExpect)
			return
		}
		servers = append(servers, raft.Server{
			ID:       raft.ServerID(m.Meta.ID),
			Address:  raft.ServerAddress(m.Meta.RPCAddr),
			Suffrage: raft.Voter,
		})
	}
	if len(servers) < s.config.BootstrapExpect {
		return
	}
	sort.Slice(servers, func(i, j int) bool { return servers[i].ID < servers[j].ID })
	s.logger.Info("bootstrapping raft", "servers", len(servers))
	future := s.raft.BootstrapCluster(raft.Configuration{Servers: servers})
	if err := future.Error(); err != nil && err != raft.ErrCantBootstrap {
		s.logger.Error("raft bootstrap failed", "error", err)
		return
	}
	s.bootstrapped = true
}

// reconcilePeers makes Raft's configuration follow gossip: alive servers
// of this region become voters; servers that left gracefully are removed.
// Failed (dead) servers stay: they may come back, and removing them could
// cost quorum for a transient fault. Only the leader calls it.
func (s *Server) reconcilePeers() error {
	future := s.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return fmt.Errorf("read raft configuration: %w", err)
	}
	known := make(map[raft.ServerID]raft.Server)
	for _, srv := range future.Configuration().Servers {
		known[srv.ID] = srv
	}
	for _, m := range s.gossip.Members() {
		if m.Meta.Role != gossip.RoleServer || m.Meta.Region != s.config.Region {
			continue
		}
		id := raft.ServerID(m.Meta.ID)
		existing, inRaft := known[id]
		switch m.Status {
		case gossip.StatusAlive:
			if inRaft && string(existing.Address) == m.Meta.RPCAddr {
				continue
			}
			s.logger.Info("adding raft peer", "node", m.Name, "id", id, "addr", m.Meta.RPCAddr)
			if err := s.raft.AddVoter(id, raft.ServerAddress(m.Meta.RPCAddr), 0, 10*time.Second).Error(); err != nil {
				return fmt.Errorf("add raft peer %s: %w", m.Name, err)
			}
		case gossip.StatusLeft:
			if !inRaft || id == raft.ServerID(s.config.NodeID) {
				continue
			}
			s.logger.Info("removing raft peer that left", "node", m.Name, "id", id)
			if err := s.raft.RemoveServer(id, 0, 10*time.Second).Error(); err != nil {
				return fmt.Errorf("remove raft peer %s: %w", m.Name, err)
			}
		}
	}
	return nil
}
