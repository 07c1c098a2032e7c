package server

import (
	"sort"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// reconcileInterval bounds how long a missed gossip event can leave Raft's
// peers out of date.
const reconcileInterval = 10 * time.Second

// monitorLeadership runs leader duties while this server leads.
func (s *Server) monitorLeadership() {
	defer s.wg.Done()
	var stopCh chan struct{}
	var done chan struct{}
	stop := func() {
		if stopCh != nil {
			close(stopCh)
			<-done
			stopCh = nil
		}
	}
	defer stop()
	for {
		select {
		case <-s.shutdownCh:
			return
		case isLeader := <-s.leaderCh:
			if isLeader && stopCh == nil {
				stopCh, done = make(chan struct{}), make(chan struct{})
				go func(stopCh, done chan struct{}) {
					defer close(done)
					s.leaderLoop(stopCh)
				}(stopCh, done)
				s.logger.Info("cluster leadership acquired")
			} else if !isLeader {
				stop()
				s.logger.Info("cluster leadership lost")
			}
		}
	}
}

// leaderLoop establishes leadership (a barrier, so the FSM has applied
// every entry of earlier terms) and then reconciles peers whenever
// membership changes, until stopCh closes.
func (s *Server) leaderLoop(stopCh chan struct{}) {
	for {
		stopped, err := s.barrier(stopCh)
		if stopped {
			return
		}
		if err == nil {
			break
		}
		s.logger.Warn("leader barrier failed", "error", err)
		select {
		case <-stopCh:
			return
		case <-time.After(time.Second):
		}
	}
	s.readyForReads.Store(true)
	defer s.readyForReads.Store(false)
	if err := s.establishLeadership(stopCh); err != nil {
		s.logger.Error("establish leadership", "error", err)
	}
	defer s.revokeLeadership()
	ticker := time.NewTicker(reconcileInterval)
	defer ticker.Stop()
	for {
		if err := s.reconcilePeers(); err != nil {
			s.logger.Warn("reconcile raft peers", "error", err)
		}
		select {
		case <-stopCh:
			return
		case <-s.shutdownCh:
			return
		case <-s.reconcileCh:
		case <-ticker.C:
		}
	}
}

// establishLeadership starts the leader-only duties: the eval broker
// (rebuilt from state), the plan applier and host liveness.
func (s *Server) establishLeadership(stopCh chan struct{}) error {
	// First the token signing key, so that no duty below finds the
	// state without one (identity_leader.go).
	s.startIdentityLeaderDuties(stopCh)
	s.evalBroker.SetEnabled(true)
	s.leaderWG.Add(3)
	go func() {
		defer s.leaderWG.Done()
		s.planApplier(stopCh)
	}()
	go func() {
		defer s.leaderWG.Done()
		s.lifecycle(stopCh)
	}()
	go func() {
		defer s.leaderWG.Done()
		s.hostLiveness(stopCh)
	}()
	s.startGroupReconciler(stopCh)
	s.startConsoleTokenPurge(stopCh)
	s.startStatePurges(stopCh)
	s.startVolumeBuildTimeouts(stopCh)
	pending, err := s.fsm.State().EvalsByStatus(nil, structs.EvalStatusPending)
	if err != nil {
		return err
	}
	sort.Slice(pending, func(i, j int) bool { return pending[i].CreateIndex < pending[j].CreateIndex })
	s.enqueueEvals(pending)
	if len(pending) > 0 {
		s.logger.Info("restored pending evaluations into the broker", "count", len(pending))
	}
	return nil
}

// revokeLeadership stops the leader-only duties; the caller has closed
// stopCh.
func (s *Server) revokeLeadership() {
	s.evalBroker.SetEnabled(false)
	s.leaderWG.Wait()
}

// barrier waits for a Raft barrier, or for leadership to end: a barrier
// caught in Raft's own shutdown can stay unanswered, and the server's
// shutdown waits for this loop (stopped is then true).
func (s *Server) barrier(stopCh chan struct{}) (stopped bool, err error) {
	f := s.raft.Barrier(raftApplyTimeout)
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return false, err
	case <-stopCh:
		return true, nil
	case <-s.shutdownCh:
		return true, nil
	}
}
