package server

import "github.com/stratus-cloud/stratus/structs"

// enqueueEvals hands evaluations to the leader's broker; it is the one
// way they get there. The FSM calls it (fsm.EvalHook) once an entry that
// created evaluations — a create, a task, an agent's reschedules — has
// committed, and establishLeadership calls it with every pending
// evaluation in the state when this server starts leading. On a
// follower the broker is off and it does nothing; the broker ignores an
// evaluation it already holds or one that is already terminal.
//
// Being called from Apply, it must never block or do I/O: it only takes
// the broker's lock to append.
func (s *Server) enqueueEvals(evals []*structs.Evaluation) {
	for _, ev := range evals {
		s.evalBroker.Enqueue(ev)
	}
}
