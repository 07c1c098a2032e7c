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
// in the same batch (optimistic concurrency: concurrent workers can never
// overcommit a host) and commits a batch of plans in one Raft entry.
func (s *Server) planApplier(stopCh chan struct{}) {
	for {
		var batch []*pendingPlan
		select {
		case <-stopCh:
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
		s.applyPlanBatch(batch)
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

func (s *Server) applyPlanBatch(batch []*pendingPlan) {
	state := s.fsm.State()
	entry := &structs.PlanApplyEntry{Faults: map[string]*structs.Fault{}, UpdatedAt: time.Now().UnixNano()}
	overlay := map[string]map[string]int64{}
	results := make([]*structs.PlanResult, len(batch))
	errs := make([]error, len(batch))
	for i, p := range batch {
		if !s.evalBroker.Outstanding(p.plan.EvalID, p.plan.EvalToken) {
			errs[i] = structs.Errorf(structs.KindConflict, "evaluation %s is no longer held by this worker", p.plan.EvalID)
			continue
		}
		results[i], errs[i] = s.evaluatePlan(state, p.plan, overlay, entry)
	}
	var index uint64
	if len(entry.Placements) > 0 || len(entry.Faults) > 0 || len(entry.Evals) > 0 {
		var err error
		index, err = s.apply(structs.PlanApplyType, entry)
		if err != nil {
			for i := range errs {
				if errs[i] == nil {
					errs[i] = err
				}
			}
		}
	}
	if index == 0 {
		// Nothing committed: a refused plan's worker still re-plans no
		// earlier than the state this batch was checked against.
		index = state.LatestIndex()
	}
	for i, p := range batch {
		if results[i] != nil {
			results[i].Index = index
		}
		p.done <- planOutcome{result: results[i], err: errs[i]}
	}
}

// evaluatePlan checks one plan against state plus the batch's overlay and
// adds what fits to entry.
func (s *Server) evaluatePlan(state *fsm.StateStore, plan *structs.Plan, overlay map[string]map[string]int64, entry *structs.PlanApplyEntry) (*structs.PlanResult, error) {
	res := &structs.PlanResult{}
	for _, a := range plan.Placements {
		inst, err := state.InstanceByID(nil, a.InstanceID)
		if err != nil {
			return nil, err
		}
		if inst == nil || !inst.AwaitsPlacement(plan.EvalID) {
			continue // deleted, or placed by an earlier delivery of this eval
		}
		host, err := state.HostByID(nil, a.HostID)
		if err != nil {
			return nil, err
		}
		if host == nil || !host.Up() || !host.Enabled || !fitsWithOverlay(host, a.Resources, overlay[host.ID]) {
			res.Refused = append(res.Refused, a.InstanceID)
			continue
		}
		if ok, err := groupAllows(state, inst, host.ID, overlay); err != nil {
			return nil, err
		} else if !ok {
			res.Refused = append(res.Refused, a.InstanceID)
			continue
		}
		recordGroupPlacement(inst, host.ID, overlay)
		if overlay[host.ID] == nil {
			overlay[host.ID] = map[string]int64{}
		}
		for class, n := range a.Resources {
			overlay[host.ID][class] += n
		}
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

// fitsWithOverlay checks a placement against a host's free capacity
// minus what the batch already put there.
func fitsWithOverlay(h *structs.Host, res map[string]int64, overlay map[string]int64) bool {
	for class, n := range res {
		inv, ok := h.Inventories[class]
		if !ok {
			return false
		}
		if n < inv.MinUnit || (inv.MaxUnit > 0 && n > inv.MaxUnit) || (inv.StepSize > 1 && n%inv.StepSize != 0) {
			return false
		}
		if h.Usage[class]+overlay[class]+n > inv.Capacity() {
			return false
		}
	}
	return true
}

// submitPlan queues a plan for the applier and waits for its outcome.
func (s *Server) submitPlan(plan *structs.Plan) (*structs.PlanResult, error) {
	p := &pendingPlan{plan: plan, done: make(chan planOutcome, 1)}
	select {
	case s.planQueue <- p:
	case <-s.shutdownCh:
		return nil, structs.Errorf(structs.KindUnavailable, "server is shutting down")
	}
	timer := time.NewTimer(planTimeout)
	defer timer.Stop()
	select {
	case out := <-p.done:
		return out.result, out.err
	case <-timer.C:
		return nil, structs.Errorf(structs.KindUnavailable, "plan was not applied within %s", planTimeout)
	case <-s.shutdownCh:
		return nil, structs.Errorf(structs.KindUnavailable, "server is shutting down")
	}
}
