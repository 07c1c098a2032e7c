package server

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/stratus-cloud/stratus/structs"
)

// Agent exits. An agent keeps an RPC session open to one server for its
// blocking queries and heartbeats. When its process dies — a crash, a
// kill, an OOM — the kernel closes that connection at once, seconds
// before gossip's probes and suspicion timeout notice, and minutes
// before a heartbeat TTL would. The server holding the session
// (sessionWatch) asks the leader to check the hosts its heartbeats
// named (Host.AgentExited); the leader dials each host's agent's gossip
// port (gossip.Pool.ConfirmExited) and marks the hosts of agents whose
// port refuses down, in memberDownLoop's batches.
//
// A session also closes while its agent lives: a server restart, the
// pool's idle reaper, a network blip. That costs one dial, which the
// agent's port answers, and nothing changes. A host that is off or cut
// off closes nothing and refuses nothing: gossip and the TTL decide.
// What a session claims is not trusted either: the claim only chooses
// which ports to dial.

// sessionWatch is the rpc.SessionObserver that remembers, for each
// session, the hosts agents' heartbeats, registrations and allocation
// watches named on it.
type sessionWatch struct {
	s  *Server
	mu sync.Mutex
	// hosts maps a session to the hosts named on it.
	hosts map[uint64][]string
	// closed are hosts of closed sessions not yet reported; reporting is
	// set while a goroutine reports them, so that the sessions a server
	// restart or a network failure closes by the hundred go to the
	// leader in a few calls, not one each.
	closed    []string
	reporting bool
}

func newSessionWatch(s *Server) *sessionWatch {
	return &sessionWatch{s: s, hosts: map[uint64][]string{}}
}

// ObserveCall records the hosts an agent's call names. Calls a server
// forwarded are not an agent's session.
func (w *sessionWatch) ObserveCall(session uint64, _ string, args any) {
	var ids []string
	switch a := args.(type) {
	case *structs.HostHeartbeatRequest:
		if a.Forwarded {
			return
		}
		ids = a.HostIDs
	case *structs.HostRegisterRequest:
		if a.Forwarded || a.Host == nil {
			return
		}
		ids = []string{a.Host.ID}
	case *structs.AllocHostRequest:
		// An agent's allocation watch: a blocking query that keeps its
		// session busy, so this session is open whenever the agent
		// lives — unlike its heartbeats', which the pool may have
		// reaped and reopened since the last one.
		if a.Forwarded || a.HostID == "" {
			return
		}
		ids = []string{a.HostID}
	default:
		return
	}
	if len(ids) == 0 || len(ids) > maxHostsPerSession {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	known := w.hosts[session]
	if slices.Equal(known, ids) {
		return // an agent names the same hosts in every heartbeat
	}
	for _, id := range ids {
		if !slices.Contains(known, id) && len(known) < maxHostsPerSession {
			known = append(known, id)
		}
	}
	w.hosts[session] = known
}

// maxHostsPerSession bounds what one session can make a server keep: an
// agent runs a handful of hosts (Ironic agents a few hundred).
const maxHostsPerSession = 4096

// SessionClosed queues the hosts named on the session for the leader to
// check.
func (w *sessionWatch) SessionClosed(session uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := w.hosts[session]
	delete(w.hosts, session)
	if len(ids) == 0 || w.s.isShuttingDown() { // our own shutdown closed it
		return
	}
	w.closed = append(w.closed, ids...)
	if !w.reporting {
		w.reporting = true
		go w.report()
	}
}

// report sends the queued hosts to the leader until none are left, at
// most maxHostsPerSession a call. A failure is only logged: gossip and
// the heartbeat TTL still catch a dead agent.
func (w *sessionWatch) report() {
	for {
		w.mu.Lock()
		ids := w.closed[:min(len(w.closed), maxHostsPerSession)]
		w.closed = w.closed[len(ids):]
		if len(ids) == 0 {
			w.closed, w.reporting = nil, false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		req := &structs.HostAgentExitedRequest{HostIDs: ids}
		req.AuthToken = w.s.serverCredential()
		if err := w.s.RPC("Host.AgentExited", req, &structs.GenericResponse{}); err != nil {
			w.s.logger.Debug("report closed agent sessions", "hosts", len(ids), "error", err)
		}
	}
}

// downCounters count, on the leader, hosts marked down by each path and
// the exit checks it made, for operators (stratus_hosts_marked_down_total,
// stratus_agent_exit_checks_total).
type downCounters struct {
	ttl, gossip, exited atomic.Uint64
	exitConfirmed       atomic.Uint64
	exitAlive           atomic.Uint64
}

// HostsMarkedDown returns how many hosts this server marked down while
// leader, by why: "heartbeat" (the TTL expired), "gossip" (gossip
// declared the agent failed or gone) and "agent_exit" (its session
// closed and its port refused).
func (s *Server) HostsMarkedDown() map[string]uint64 {
	return map[string]uint64{
		"heartbeat":  s.downs.ttl.Load(),
		"gossip":     s.downs.gossip.Load(),
		"agent_exit": s.downs.exited.Load(),
	}
}

// AgentExitChecks returns how many agents whose session closed this
// server checked while leader, by result: "exited" (the port refused)
// or "alive" (it did not).
func (s *Server) AgentExitChecks() map[string]uint64 {
	return map[string]uint64{"exited": s.downs.exitConfirmed.Load(), "alive": s.downs.exitAlive.Load()}
}
