package server

import (
	"context"
	"github.com/stratus-cloud/stratus/internal/retry"
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
	// maxReplans bounds how often a worker re-plans placements the
	// applier refused for no reason it can see — the host unchanged since
	// the worker's snapshot and nothing else placed on it — before
	// handing the evaluation back. A refusal because another plan took
	// the host first (PlanResult.Contended) is not counted: the cluster
	// made progress, and the re-plan sees it. Under load every worker
	// picks the same best host from the same snapshot, and counting those
	// refusals failed evaluations on empty clusters ("scheduling failed
	// after repeated attempts", issue #31). The broker's nack timeout
	// still bounds how long a worker may keep re-planning.
	maxReplans = 5
	// evalsInFlight is how many evaluations one worker holds at once.
	// An evaluation spends most of its life waiting (for its index, for
	// its plan's commit, for the broker's answers), so this, times the
	// workers, bounds how many boots a second reach a host. In the
	// 3-server boot benchmark (six workers, 64 clients) on a quiet
	// machine, 8 reached ACTIVE at 860-930/s, 0.6 s behind the last
	// accepted request; 32 at 1,080-1,130/s, within 60 ms of it, and
	// with less CPU a boot (larger plan and report batches).
	evalsInFlight = 32
	// hostCaches is how many evaluations of one worker schedule at the
	// same moment, each with its own host cache: scheduling is the short,
	// CPU-bound part of an evaluation, and fewer caches are each used
	// more often, so each has fewer changed hosts to catch up on.
	hostCaches = 2
)

// worker is one scheduler worker. Workers run on every server: they
// dequeue from the leader's broker over RPC, schedule against their own
// state (once it has caught up to the evaluation), and submit the plan to
// the leader's applier.
type worker struct {
	srv *Server
	id  int

	// caches hold the scheduler's host summaries, one per evaluation
	// being scheduled (hostCaches): each placement then reads only the
	// hosts that changed since the cache's last one.
	caches chan *scheduler.HostCache
	// hosts is the last host list read, shared by the evaluations in
	// flight while the hosts table does not change.
	hostsMu    sync.Mutex
	hosts      []*structs.Host
	hostsIndex uint64

	// planSubmit, when set, replaces the Plan.Submit RPC (tests).
	planSubmit func(*structs.Plan) (*structs.PlanResult, error)
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
	w.caches = make(chan *scheduler.HostCache, hostCaches)
	for range hostCaches {
		w.caches <- &scheduler.HostCache{}
	}
	b := &retry.Backoff{Min: 50 * time.Millisecond, Max: 2 * time.Second}
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
			retry.Sleep(w.srv.shutdownCh, b.Next())
			continue
		}
		b.Reset()
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

// process schedules one evaluation until every instance is placed or has
// failed, re-planning placements the applier refused.
func (w *worker) process(ev *structs.Evaluation, token string, waitIndex uint64) error {
	rng := rand.New(rand.NewPCG(seedOf(ev.ID), uint64(waitIndex)))
	for failed := 0; failed <= maxReplans; {
		if err := w.waitForIndex(waitIndex); err != nil {
			return err
		}
		state := w.srv.fsm.State()
		pending, err := pendingInstances(state, ev)
		if err != nil {
			return err
		}
		plan, err := w.schedule(state, ev, pending, rng)
		if err != nil {
			return err
		}
		plan.EvalToken = token
		plan.SnapshotIndex = state.LatestIndex()
		result, err := w.submit(plan)
		if err != nil {
			return err
		}
		if len(result.Refused) == 0 {
			return nil
		}
		if len(result.Contended) < len(result.Refused) {
			failed++
		}
		waitIndex = result.Index
	}
	return structs.Errorf(structs.KindUnavailable, "placements kept being refused, %d plans on hosts nobody else had changed", maxReplans+1)
}

// submit sends a plan to the leader's applier (or to w.planSubmit, a
// test's stand-in for it).
func (w *worker) submit(plan *structs.Plan) (*structs.PlanResult, error) {
	if w.planSubmit != nil {
		return w.planSubmit(plan)
	}
	var result structs.PlanResult
	if err := w.srv.RPC("Plan.Submit", &structs.PlanSubmitRequest{Plan: plan}, &result); err != nil {
		return nil, err
	}
	return &result, nil
}

// schedule runs the scheduler with one of the worker's host caches (none
// for a worker that is not running).
func (w *worker) schedule(state *fsm.StateStore, ev *structs.Evaluation, pending []*structs.Instance, rng *rand.Rand) (*structs.Plan, error) {
	var cache *scheduler.HostCache
	if w.caches != nil {
		cache = <-w.caches
		defer func() { w.caches <- cache }()
	}
	plan, err := scheduler.ScheduleCached(cache, stateHosts{state: state, w: w}, ev, pending, w.srv.schedulerConfig(state), rng)
	if err == nil {
		w.srv.metrics.observePlacementFailures(plan.Failures)
	}
	return plan, err
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
// with the new flavor, away from its source host (unless a resize may
// stay there: allow_resize_to_same_host), on the admin's target host if
// one was given.
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
			if t.SourceHostID != "" && !t.AllowSameHost {
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
type stateHosts struct {
	state *fsm.StateStore
	// w, when set, shares its last host list (worker.hostList).
	w *worker
}

func (s stateHosts) Hosts() ([]*structs.Host, error) {
	if s.w == nil {
		return s.state.Hosts(nil)
	}
	return s.w.hostList(s.state)
}

// hostList returns the hosts, reusing the list read last while the hosts
// table has not changed since. The table's index is read before the
// list, so a kept list is never older than its index.
func (w *worker) hostList(state *fsm.StateStore) ([]*structs.Host, error) {
	index := state.Index(fsm.TableHosts)
	w.hostsMu.Lock()
	if index != 0 && index == w.hostsIndex {
		hosts := w.hosts
		w.hostsMu.Unlock()
		return hosts, nil
	}
	w.hostsMu.Unlock()
	hosts, err := state.Hosts(nil)
	if err != nil {
		return nil, err
	}
	w.hostsMu.Lock()
	if index > w.hostsIndex {
		w.hosts, w.hostsIndex = hosts, index
	}
	w.hostsMu.Unlock()
	return hosts, nil
}

func seedOf(id string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return h.Sum64()
}
