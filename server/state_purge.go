package server

import (
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// statePurgeInterval is how often the leader looks for replicated
// records past their retention: idempotency keys older than
// structs.CreateRequestTTL and finished evaluations older than
// structs.EvalGCThreshold.
const statePurgeInterval = time.Minute

// startStatePurges runs the leader's purges of expired records until
// stopCh closes. Each proposes an entry only when something is old
// enough, and each entry carries its cut-off time, so every replica
// removes the same records whatever its clock.
func (s *Server) startStatePurges(stopCh chan struct{}) {
	s.runPeriodicAsLeader(stopCh, statePurgeInterval, func(now time.Time) {
		if err := s.purgeCreateRequests(now); err != nil {
			s.logger.Warn("purge create requests", "error", err)
		}
		if err := s.reapEvals(now); err != nil {
			s.logger.Warn("reap finished evaluations", "error", err)
		}
	})
}

// reapEvals proposes a reap of the finished evaluations older than
// structs.EvalGCThreshold at now, when there is one. The entry is
// ignorable: a server too old to know it keeps them.
func (s *Server) reapEvals(now time.Time) error {
	before := now.Add(-structs.EvalGCThreshold).UnixNano()
	oldest, ok, err := s.fsm.State().OldestFinishedEval()
	if err != nil || !ok || oldest >= before {
		return err
	}
	_, err = s.apply(structs.EvalReapType|structs.IgnoreUnknownTypeFlag, &structs.EvalReapEntry{Before: before})
	return err
}
