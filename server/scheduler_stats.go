package server

// SchedulerStats are the leader's scheduling queues, for the agent's
// metrics: evaluations ready for a scheduler worker and handed out but
// not acknowledged yet, and plans waiting for the plan applier. A
// follower's are all zero.
type SchedulerStats struct {
	EvalsReady, EvalsUnacked, PlansQueued int
	// EvalsByTrigger are the broker's evaluations by trigger, with the
	// blocked ones (eval_broker_stats.go).
	EvalsByTrigger map[string]EvalBrokerCounts
}

// SchedulerStats reads the scheduling queues.
func (s *Server) SchedulerStats() SchedulerStats {
	var st SchedulerStats
	if s.evalBroker != nil {
		st.EvalsReady, st.EvalsUnacked = s.evalBroker.Stats()
		st.EvalsByTrigger = s.evalBroker.statsByTrigger()
	}
	st.PlansQueued = len(s.planQueue)
	return st
}
