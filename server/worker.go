package server

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/server/scheduler"
	"github.com/stratus-cloud/stratus/structs"
)

const (
	// dequeueWait is how long a worker's dequeue blocks on the leader.
	dequeueWait = time.Second
	// maxReplans bounds how often a worker re-plans refused placements
	// before handing the evaluation back.
	maxReplans = 5
	// evalsInFlight is how many evaluations one worker holds at once.
	evalsInFlight = 4
)

// worker is one scheduler worker. Workers run on every server: they
// dequeue from the leader's broker over RPC, schedule against their own
// state (once it has caught up to the evaluation), and submit the plan to
// the leader's applier.
type worker struct {
	srv *Server
	id  int
}

// run dequeues evaluations and handles up to evalsInFlight of them at
// once: an evaluation spends most of its time waiting for its plan to
// commit, and holding several lets their plans share the applier's
// batches (one Raft entry) instead of queueing one behind the other.
func (w *worker) run() {
	defer w.srv.wg.Done()
	var inflight sync.WaitGroup
	defer inflight.Wait()
	slots := make(chan struct{}, evalsInFlight)
	backoff := 50 * time.Millisecond
	for !w.srv.isShuttingDown() {
		select {
		case slots <- struct{}{}:
		case <-w.srv.shutdownCh:
			return
		}
		var resp structs.EvalDequeueResponse
		err := w.srv.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{Timeout: dequeueWait}, &resp)
		if err != nil {
			<-slots
			w.sleep(backoff)
			if backoff < 2*time.Second {
				backoff *= 2
			}
			continue
		}
		backoff = 50 * time.Millisecond
		if resp.Eval == nil {
			<-slots
			continue
		}
		inflight.Add(1)
		go func() {
			defer inflight.Done()
			defer func() { <-slots }()
			w.handle(&resp)
		}()
	}
}

// handle schedules one dequeued evaluation and acks it, or nacks it for
// redelivery when scheduling failed.
func (w *worker) handle(resp *structs.EvalDequeueResponse) {
	if err := w.process(resp.Eval, resp.Token, resp.WaitIndex); err != nil {
		w.srv.logger.Warn("scheduling failed; returning evaluation", "eval", resp.Eval.ID, "error", err)
		_ = w.srv.RPC("Eval.Nack", &structs.EvalAckRequest{EvalID: resp.Eval.ID, Token: resp.Token}, &structs.GenericResponse{})
		return
	}
	if err := w.srv.RPC("Eval.Ack", &structs.EvalAckRequest{EvalID: resp.Eval.ID, Token: resp.Token}, &structs.GenericResponse{}); err != nil {
		w.srv.logger.Debug("eval ack", "eval", resp.Eval.ID, "error", err)
	}
}

func (w *worker) sleep(d time.Duration) {
	select {
	case <-w.srv.shutdownCh:
	case <-time.After(d):
	}
}

// process schedules one evaluation until every instance is placed or has
// failed, re-planning placements the applier refused.
func (w *worker) process(ev *structs.Evaluation, token string, waitIndex uint64) error {
	rng := rand.New(rand.NewPCG(seedOf(ev.ID), uint64(waitIndex)))
	for attempt := 0; attempt <= maxReplans; attempt++ {
		if err := w.waitForIndex(waitIndex); err != nil {
			return err
		}
		state := w.srv.fsm.State()
		pending, err := pendingInstances(state, ev)
		if err != nil {
			return err
		}
		plan, err := scheduler.Schedule(stateHosts{state}, ev, pending, w.srv.schedulerConfig(state), rng)
		if err != nil {
			return err
		}
		plan.EvalToken = token
		plan.SnapshotIndex = state.LatestIndex()
		var result structs.PlanResult
		if err := w.srv.RPC("Plan.Submit", &structs.PlanSubmitRequest{Plan: plan}, &result); err != nil {
			return err
		}
		if len(result.Refused) == 0 {
			return nil
		}
		waitIndex = result.Index
	}
	return structs.Errorf(structs.KindUnavailable, "placements kept being refused after %d plans", maxReplans+1)
}

// waitForIndex blocks until this server's state has applied index, so the
// scheduler never decides on state older than the evaluation.
func (w *worker) waitForIndex(index uint64) error {
	if index == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, got, err := fsm.BlockingQuery(ctx, w.srv.fsm.State, index-1, 30*time.Second,
		func(ws memdb.WatchSet, s *fsm.StateStore) (any, uint64, error) {
			ws.Add(s.IndexWatch())
			return nil, s.LatestIndex(), nil
		})
	if err != nil {
		return err
	}
	if got < index {
		return structs.Errorf(structs.KindUnavailable, "state did not reach index %d (at %d)", index, got)
	}
	return nil
}

// pendingInstances are the evaluation's instances still waiting for a
// host. A moving instance is scheduled as its destination will run it:
// with the new flavor, away from its source host, on the admin's target
// host if one was given.
func pendingInstances(state *fsm.StateStore, ev *structs.Evaluation) ([]*structs.Instance, error) {
	var out []*structs.Instance
	for _, id := range ev.InstanceIDs {
		inst, err := state.InstanceByID(nil, id)
		if err != nil {
			return nil, err
		}
		if inst == nil || !inst.AwaitsPlacement(ev.ID) {
			continue
		}
		if t := inst.Task; t != nil {
			inst = inst.Copy()
			if t.NewFlavor != nil {
				inst.Flavor, inst.FlavorID = t.NewFlavor, t.NewFlavor.ID
			}
			if t.Kind == structs.TaskKindLiveMigrate && inst.Flavor != nil {
				// Only hosts whose driver can receive a live guest.
				f := inst.Flavor.Copy()
				if f.ExtraSpecs == nil {
					f.ExtraSpecs = map[string]string{}
				}
				f.ExtraSpecs["capabilities:"+scheduler.DriverCapabilityKey+structs.HostCapabilityLiveMigrate] = "true"
				inst.Flavor = f
			}
			if t.SourceHostID != "" {
				// RetryFilter keeps the destination off the source.
				inst.Attempts = append(inst.Attempts, &structs.BuildAttempt{HostID: t.SourceHostID, Error: "source host of the move"})
			}
			inst.TargetHostID = t.TargetHostID
		}
		out = append(out, inst)
	}
	return out, nil
}

// stateHosts adapts the state store to the scheduler's State.
type stateHosts struct{ state *fsm.StateStore }

func (s stateHosts) Hosts() ([]*structs.Host, error) { return s.state.Hosts(nil) }

func seedOf(id string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return h.Sum64()
}
