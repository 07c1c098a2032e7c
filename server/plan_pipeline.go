package server

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// maxPlanCommits is how many plan batches the applier has in Raft at
// once: while one commits (replication, fsync, the FSMs' apply), the next
// is checked and proposed, so the log store and the network work on it
// while the FSMs apply the first.
const maxPlanCommits = 2

// planPipeline is the applier's memory of its commits in flight. Only
// the applier's goroutine uses it; each commit's outcome is waited for,
// and its plans answered, by a goroutine of its own.
type planPipeline struct {
	srv      *Server
	inflight []*planCommit
	wg       sync.WaitGroup
}

// planCommit is one batch proposed to Raft and not yet known committed.
type planCommit struct {
	// done closes once index and err are set.
	done  chan struct{}
	index uint64
	err   error
	// delta is what the batch places: resources by host, group members
	// by host (placement_groups.go), and the instances it places.
	delta *planOverlay
	// marker is one allocation of the batch: once the state holds it,
	// the state holds the whole batch (one transaction).
	marker string
}

// planOverlay is what the state does not show yet but a check must
// count: host id → resource class → amount (and group keys, see
// placement_groups.go), and the instances placed.
type planOverlay struct {
	used     map[string]map[string]int64
	inFlight map[string]bool
	// mirror, when set, counts the same placements again: the batch's
	// own, kept apart from the commits in flight.
	mirror *planOverlay
}

func newPlanOverlay() *planOverlay {
	return &planOverlay{used: map[string]map[string]int64{}, inFlight: map[string]bool{}}
}

// add counts a placement of inst on hostID.
func (o *planOverlay) add(inst *structs.Instance, hostID string, res map[string]int64) {
	recordGroupPlacement(inst, hostID, o.used)
	if o.used[hostID] == nil {
		o.used[hostID] = map[string]int64{}
	}
	for class, n := range res {
		o.used[hostID][class] += n
	}
	o.inFlight[inst.ID] = true
	if o.mirror != nil {
		o.mirror.add(inst, hostID, res)
	}
}

// merge adds another overlay's counts.
func (o *planOverlay) merge(other *planOverlay) {
	for host, m := range other.used {
		if o.used[host] == nil {
			o.used[host] = map[string]int64{}
		}
		for k, n := range m {
			o.used[host][k] += n
		}
	}
	for id := range other.inFlight {
		o.inFlight[id] = true
	}
}

// apply checks a batch against the state plus the commits in flight and
// proposes what fits, without waiting for it to commit unless the
// pipeline is full.
func (pl *planPipeline) apply(batch []*pendingPlan) {
	s := pl.srv
	state := s.fsm.State()
	base := pl.pending(state)
	entry := &structs.PlanApplyEntry{Faults: map[string]*structs.Fault{}, UpdatedAt: time.Now().UnixNano()}
	// The checks count the commits in flight plus the batch so far; the
	// batch's own placements are kept apart for the next batches.
	ov, delta := newPlanOverlay(), newPlanOverlay()
	ov.merge(base)
	ov.mirror = delta
	results := make([]*structs.PlanResult, len(batch))
	errs := make([]error, len(batch))
	for i, p := range batch {
		if !s.evalBroker.Outstanding(p.plan.EvalID, p.plan.EvalToken) {
			errs[i] = structs.Errorf(structs.KindConflict, "evaluation %s is no longer held by this worker", p.plan.EvalID)
			continue
		}
		results[i], errs[i] = s.checkPlan(state, p.plan, ov, entry)
	}
	if len(entry.Placements) == 0 && len(entry.Faults) == 0 && len(entry.Evals) == 0 {
		// Nothing to commit: a refused plan's worker re-plans no earlier
		// than the state this batch was checked against, commits in
		// flight included.
		index := pl.drain()
		pl.answer(batch, results, errs, max(index, state.LatestIndex()), nil)
		return
	}
	for len(pl.inflight) >= maxPlanCommits {
		pl.waitOldest()
	}
	data, err := encodeCompactEntry(structs.PlanApplyType, entry)
	if err != nil {
		pl.answer(batch, results, errs, 0, err)
		return
	}
	c := &planCommit{done: make(chan struct{}), delta: delta}
	if len(entry.Placements) > 0 {
		c.marker = entry.Placements[0].ID
	}
	future := s.raft.Apply(data, raftApplyTimeout)
	pl.inflight = append(pl.inflight, c)
	pl.wg.Add(1)
	go func() {
		defer pl.wg.Done()
		c.index, c.err = appliedIndex(future, s.shutdownCh)
		close(c.done)
		pl.answer(batch, results, errs, c.index, c.err)
	}()
}

// pending drops the commits that finished and returns what the others
// place and the state does not show yet.
func (pl *planPipeline) pending(state *fsm.StateStore) *planOverlay {
	out := newPlanOverlay()
	kept := pl.inflight[:0]
	for _, c := range pl.inflight {
		select {
		case <-c.done:
			continue
		default:
		}
		kept = append(kept, c)
		if c.marker != "" {
			if a, err := state.AllocationByID(nil, c.marker); err == nil && a != nil {
				continue // applied already; the state counts it
			}
		}
		out.merge(c.delta)
	}
	clear(pl.inflight[len(kept):])
	pl.inflight = kept
	return out
}

// waitOldest waits for the oldest commit in flight.
func (pl *planPipeline) waitOldest() {
	<-pl.inflight[0].done
	pl.inflight[0] = nil
	pl.inflight = pl.inflight[1:]
}

// drain waits for every commit in flight and their answers, and returns
// the highest index committed.
func (pl *planPipeline) drain() uint64 {
	var index uint64
	for len(pl.inflight) > 0 {
		c := pl.inflight[0]
		pl.waitOldest()
		index = max(index, c.index)
	}
	pl.wg.Wait()
	return index
}

// answer sends each plan of a batch its outcome.
func (pl *planPipeline) answer(batch []*pendingPlan, results []*structs.PlanResult, errs []error, index uint64, err error) {
	for i, p := range batch {
		if errs[i] == nil && err != nil {
			errs[i] = err
		}
		if results[i] != nil {
			results[i].Index = index
		}
		p.done <- planOutcome{result: results[i], err: errs[i]}
	}
}

// appliedIndex waits for a proposed entry and returns its index, or why
// it failed: as raftApply does, a lost leadership is KindNoLeader (the
// entry may or may not commit), and the FSM's refusal is the error.
func appliedIndex(future raft.ApplyFuture, shutdownCh <-chan struct{}) (uint64, error) {
	if err := waitFuture(future, shutdownCh); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) ||
			errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			return 0, structs.Errorf(structs.KindNoLeader, "raft apply: %v", err)
		}
		return 0, fmt.Errorf("%s: raft apply: %w", structs.PlanApplyType, err)
	}
	if err, ok := future.Response().(error); ok {
		return future.Index(), fmt.Errorf("%s: %w", structs.PlanApplyType, err)
	}
	return future.Index(), nil
}
