package fsm

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// EvalHook hears, once an entry's transaction has committed, of the
// pending evaluations that entry created: a create's, a task's (moves,
// an offloaded unshelve) and an agent's reschedules. The server registers
// one to hand them to its eval broker, so no call site has to remember
// to enqueue after a commit.
//
// It is called from Apply, on every server, after the commit: it must
// never block, do I/O or change state — the server's only enqueues in
// memory, and only while it leads. What it is given is stored state: it
// must not modify it.
type EvalHook func(evals []*structs.Evaluation)

// SetEvalHook registers the hook; call it before Raft starts applying
// entries. A restored state store keeps it.
func (f *FSM) SetEvalHook(h EvalHook) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.evalHook = h
	f.state.evalHook = h
}

// announceEvals arranges for the store's hook to hear of evs when txn
// commits (memdb runs deferred functions only on commit, so a refused
// entry, or a batch's transaction dropped to be built again, announces
// nothing).
func (s *StateStore) announceEvals(txn *memdb.Txn, evs ...*structs.Evaluation) {
	h := s.evalHook
	if h == nil || len(evs) == 0 {
		return
	}
	txn.Defer(func() { h(evs) })
}
