package server

import (
	"context"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Eval is the endpoint for evaluations: reads for users, and the
// broker's dequeue/ack/nack for scheduler workers.
type Eval struct{ srv *Server }

// maxDequeueWait bounds a dequeue's long poll.
const maxDequeueWait = 10 * time.Second

// Dequeue hands out a ready evaluation, waiting up to args.Timeout.
func (e *Eval) Dequeue(args *structs.EvalDequeueRequest, reply *structs.EvalDequeueResponse) error {
	if done, err := e.srv.forward("Eval.Dequeue", args, args, reply); done {
		return err
	}
	wait := args.Timeout
	if wait <= 0 || wait > maxDequeueWait {
		wait = maxDequeueWait
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ev, token, err := e.srv.evalBroker.Dequeue(ctx)
	if err != nil || ev == nil {
		return err
	}
	reply.Eval, reply.Token = ev, token
	// The worker must see at least the state the evaluation was written
	// at, and what placed or failed its instances since.
	reply.WaitIndex = max(ev.ModifyIndex, e.srv.fsm.State().Index(fsm.TableEvals))
	return nil
}

// Ack completes an evaluation.
func (e *Eval) Ack(args *structs.EvalAckRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Eval.Ack", args, args, reply); done {
		return err
	}
	return e.srv.evalBroker.Ack(args.EvalID, args.Token)
}

// Nack hands an evaluation back for redelivery.
func (e *Eval) Nack(args *structs.EvalAckRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Eval.Nack", args, args, reply); done {
		return err
	}
	return e.srv.evalBroker.Nack(args.EvalID, args.Token)
}

// List reads every evaluation.
func (e *Eval) List(args *structs.EvalListRequest, reply *structs.EvalListResponse) error {
	if done, err := e.srv.forward("Eval.List", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		evs, err := state.Evals(ws)
		reply.Evals = evs
		return evs, state.Index(fsm.TableEvals), err
	})
}

// Get reads one evaluation.
func (e *Eval) Get(args *structs.EvalSpecificRequest, reply *structs.SingleEvalResponse) error {
	if done, err := e.srv.forward("Eval.Get", args, args, reply); done {
		return err
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		ev, err := state.EvalByID(ws, args.EvalID)
		reply.Eval = ev
		return ev, state.Index(fsm.TableEvals), err
	})
	if err == nil && reply.Eval == nil {
		return structs.Errorf(structs.KindNotFound, "evaluation %q not found", args.EvalID)
	}
	return err
}

// failEval marks an evaluation the broker gave up on as failed, and its
// still-unplaced instances as ERROR.
func (s *Server) failEval(ev *structs.Evaluation, reason string) {
	state := s.fsm.State()
	now := time.Now().UnixNano()
	entry := &structs.PlanApplyEntry{Faults: map[string]*structs.Fault{}, UpdatedAt: now}
	pending, err := pendingInstances(state, ev)
	if err != nil {
		s.logger.Error("fail evaluation", "eval", ev.ID, "error", err)
		return
	}
	for _, inst := range pending {
		entry.Faults[inst.ID] = &structs.Fault{Code: 500, Message: "Scheduling failed: " + reason, CreatedAt: now}
	}
	failed := ev.Copy()
	failed.Status, failed.StatusDescription = structs.EvalStatusFailed, reason
	entry.Evals = []*structs.Evaluation{failed}
	if _, err := s.apply(structs.PlanApplyType, entry); err != nil {
		s.logger.Error("record failed evaluation", "eval", ev.ID, "error", err)
	}
}
