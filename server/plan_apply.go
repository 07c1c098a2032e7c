package server

import (
	"fmt"
	"time"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

const (
	// maxPlanBatch bounds how many queued plans one Raft entry commits.
	maxPlanBatch = 256
	// planTimeout bounds a worker's wait for its plan's outcome.
	planTimeout = time.Minute
	// planLeaderCheck is how often a waiting plan checks that this
	// server still leads.
	planLeaderCheck = 250 * time.Millisecond
)

// pendingPlan is a plan waiting in the leader's queue.
type pendingPlan struct {
	plan *structs.Plan
	done chan planOutcome
}

type planOutcome struct {
	result *structs.PlanResult
	err    error
}

// planApplier is the leader's serial plan applier: it re-checks every
// placement against the newest state plus the placements already accepted
// (optimistic concurrency: concurrent workers can never overcommit a
// host) and commits a batch of plans in one Raft entry. As Nomad's
// applier does, it checks the next batch while the previous one is being
// committed (plan_pipeline.go), counting the placements of a commit in
// flight as if they were in the state already.
func (s *Server) planApplier(stopCh chan struct{}) {
	pl := &planPipeline{srv: s}
	for {
		var batch []*pendingPlan
		select {
		case <-stopCh:
			pl.drain()
			s.failQueuedPlans()
			return
		case p := <-s.planQueue:
			batch = append(batch, p)
		}
	drain:
		for len(batch) < maxPlanBatch {
			select {
			case p := <-s.planQueue:
				batch = append(batch, p)
			default:
				break drain
			}
		}
		pl.apply(batch)
	}
}

// failQueuedPlans answers every queued plan when leadership ends; their
// workers nack and the next leader redelivers the evaluations.
func (s *Server) failQueuedPlans() {
	for {
		select {
		case p := <-s.planQueue:
			p.done <- planOutcome{err: structs.ErrNoLeader}
		default:
			return
		}
	}
}

// evaluatePlan checks one plan against state plus overlay (what a batch
// already accepted, host id → class → amount) and adds what fits to
// entry and to overlay.
func (s *Server) evaluatePlan(state *fsm.StateStore, plan *structs.Plan, overlay map[string]map[string]int64, entry *structs.PlanApplyEntry) (*structs.PlanResult, error) {
	return s.checkPlan(state, plan, &planOverlay{used: overlay, inFlight: map[string]bool{}}, entry)
}

// checkPlan checks one plan against state plus the overlay (commits in
// flight and the batch so far) and adds what fits to entry and to ov.
func (s *Server) checkPlan(state *fsm.StateStore, plan *structs.Plan, ov *planOverlay, entry *structs.PlanApplyEntry) (*structs.PlanResult, error) {
	overlay := ov.used
	res := &structs.PlanResult{}
	for _, a := range plan.Placements {
		inst, err := state.InstanceByID(nil, a.InstanceID)
		if err != nil {
			return nil, err
		}
		if inst == nil || !inst.AwaitsPlacement(plan.EvalID) {
			continue // deleted, or placed by an earlier delivery of this eval
		}
		if ov.inFlight[inst.ID] {
			// Placed by a commit still in flight (an earlier delivery of
			// this evaluation): the worker looks again once it landed.
			res.Refused = append(res.Refused, a.InstanceID)
			res.Contended = append(res.Contended, a.InstanceID)
			continue
		}
		host, err := state.HostByID(nil, a.HostID)
		if err != nil {
			return nil, err
		}
		if ok, err := placementAllowed(state, inst, host, a.Resources, overlay); err != nil {
			return nil, err
		} else if !ok {
			res.Refused = append(res.Refused, a.InstanceID)
			if contended(host, plan.SnapshotIndex, overlay) {
				res.Contended = append(res.Contended, a.InstanceID)
			}
			continue
		}
		ov.add(inst, host.ID, a.Resources)
		entry.Placements = append(entry.Placements, a)
		res.Placed = append(res.Placed, a)
	}
	for _, f := range plan.Failures {
		entry.Faults[f.InstanceID] = &structs.Fault{
			Code:      500,
			Message:   "No valid host was found. " + f.Explanation,
			CreatedAt: entry.UpdatedAt,
		}
	}
	if len(res.Refused) == 0 {
		ev, err := state.EvalByID(nil, plan.EvalID)
		if err != nil {
			return nil, err
		}
		if ev != nil {
			done := ev.Copy()
			done.Status = structs.EvalStatusComplete
			if len(plan.Failures) > 0 {
				done.StatusDescription = fmt.Sprintf("%d of %d instances could not be placed", len(plan.Failures), len(ev.InstanceIDs))
			}
			entry.Evals = append(entry.Evals, done)
		}
	}
	return res, nil
}

// contended reports whether a refusal on host is another plan's doing
// rather than a disagreement between the worker and the applier: the
// host changed after the snapshot the worker scheduled on (placements,
// status), or the batch and the commits in flight put something on it.
// Workers that schedule from the same snapshot all pick the same best
// host (host_subset_size 1, ties to the lowest ID), so under load most
// refusals are this.
func contended(host *structs.Host, snapshotIndex uint64, overlay map[string]map[string]int64) bool {
	return host != nil && (host.ModifyIndex > snapshotIndex || len(overlay[host.ID]) > 0)
}

// submitPlan queues a plan for the applier and waits for its outcome.
// It gives up as soon as this server no longer leads: the applier that
// would have answered has stopped (it answers what it had queued), and
// a plan left in the queue is refused by the next one, whose broker no
// longer knows the worker's token. A worker is never left waiting for
// an applier that is gone.
func (s *Server) submitPlan(plan *structs.Plan) (*structs.PlanResult, error) {
	if !s.IsLeader() {
		return nil, structs.ErrNoLeader
	}
	p := &pendingPlan{plan: plan, done: make(chan planOutcome, 1)}
	queued := time.Now()
	select {
	case s.planQueue <- p:
	case <-s.shutdownCh:
		return nil, structs.Errorf(structs.KindUnavailable, "server is shutting down")
	}
	timer := time.NewTimer(planTimeout)
	defer timer.Stop()
	check := time.NewTicker(planLeaderCheck)
	defer check.Stop()
	for {
		select {
		case out := <-p.done:
			s.metrics.observePlanApply(time.Since(queued))
			return out.result, out.err
		case <-check.C:
			if !s.IsLeader() {
				return nil, structs.Errorf(structs.KindNoLeader, "leadership lost before the plan was applied")
			}
		case <-timer.C:
			return nil, structs.Errorf(structs.KindUnavailable, "plan was not applied within %s", planTimeout)
		case <-s.shutdownCh:
			return nil, structs.Errorf(structs.KindUnavailable, "server is shutting down")
		}
	}
}
