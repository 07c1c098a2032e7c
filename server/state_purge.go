package server

import (
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// statePurgeInterval is how often the leader looks for replicated
// records past their retention: idempotency keys older than
// Config.IdempotencyKeyTTL, finished evaluations older than
// Config.EvalGCThreshold and deleted instances' records older than
// Config.DeletedRetention (deleted_purge.go).
const statePurgeInterval = time.Minute

// startStatePurges runs the leader's purges of expired records until
// stopCh closes. Each proposes an entry only when something is old
// enough, and each entry carries its cut-off time, so every replica
// removes the same records whatever its clock.
func (s *Server) startStatePurges(stopCh chan struct{}) {
	every := statePurgeEvery(s.config.DeletedRetention, s.config.EvalGCThreshold, s.config.IdempotencyKeyTTL)
	s.runPeriodicAsLeader(stopCh, every, func(now time.Time) {
		if err := s.purgeCreateRequests(now); err != nil {
			s.logger.Warn("purge create requests", "error", err)
		}
		if err := s.reapEvals(now); err != nil {
			s.logger.Warn("reap finished evaluations", "error", err)
		}
		if err := s.purgeDeleted(now); err != nil {
			s.logger.Warn("purge deleted instances' records", "error", err)
		}
	})
}

// reapEvals proposes a reap of the finished evaluations older than
// Config.EvalGCThreshold at now, when there is one. The entry is
// ignorable: a server too old to know it keeps them.
func (s *Server) reapEvals(now time.Time) error {
	before := now.Add(-s.config.EvalGCThreshold).UnixNano()
	oldest, ok, err := s.fsm.State().OldestFinishedEval()
	if err != nil || !ok || oldest >= before {
		return err
	}
	_, err = s.apply(structs.EvalReapType|structs.IgnoreUnknownTypeFlag, &structs.EvalReapEntry{Before: before})
	return err
}

// statePurgeEvery is how often the purges run: statePurgeInterval, or
// half the shortest retention when that is sooner (at least a second),
// so records outlive their retention by at most half of it. A negative
// retention (forever) does not count.
func statePurgeEvery(retentions ...time.Duration) time.Duration {
	every := statePurgeInterval
	for _, r := range retentions {
		if half := r / 2; half > 0 && half < every {
			every = max(half, time.Second)
		}
	}
	return every
}
