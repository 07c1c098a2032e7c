package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

// contentionSetup starts a server without workers, with hosts of one
// VCPU each (one m1.tiny fills a host), a victim instance and rivals
// single-instance creates, and dequeues every evaluation: the test plays
// the workers.
func contentionSetup(t *testing.T, hosts, rivals int) (*Server, *structs.InstanceCreateResponse, []*structs.InstanceCreateResponse, map[string]*structs.EvalDequeueResponse) {
	t.Helper()
	s := testServer(t, func(c *Config) { c.NumSchedulers = -1; c.HeartbeatTTL = time.Hour })
	waitForLeader(t, s)
	seedFlavors(t, s)
	for i := 0; i < hosts; i++ {
		registerHost(t, s, testHost(fmt.Sprintf("h%d", i), 1, 65536))
	}
	victim := createInstances(t, s, "victim", "m1.tiny", 1)
	var others []*structs.InstanceCreateResponse
	for i := 0; i < rivals; i++ {
		others = append(others, createInstances(t, s, fmt.Sprintf("rival%d", i), "m1.tiny", 1))
	}
	held := map[string]*structs.EvalDequeueResponse{}
	for len(held) < 1+rivals {
		var resp structs.EvalDequeueResponse
		if err := s.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{Timeout: time.Second}, &resp); err != nil {
			t.Fatalf("dequeue: %v", err)
		}
		if resp.Eval != nil {
			held[resp.Eval.ID] = &resp
		}
	}
	return s, victim, others, held
}

// TestContendedRefusalsDoNotFailAnEvaluation reproduces issue #31's
// "scheduling failed after repeated attempts" on a cluster with room:
// workers scheduling from the same snapshot pick the same best host,
// and one evaluation can lose that race to other plans more times in a
// row than the re-plan budget allowed. Here a rival plan takes the
// victim's chosen host just before each of the victim's plans reaches
// the applier, maxReplans+1 times (every refusal the old budget
// allowed); hosts remain free, so the victim must still be placed.
func TestContendedRefusalsDoNotFailAnEvaluation(t *testing.T) {
	t.Parallel()
	rivalCount := maxReplans + 1
	s, victim, rivals, held := contentionSetup(t, rivalCount+2, rivalCount)
	w := &worker{srv: s}
	next := 0
	w.planSubmit = func(plan *structs.Plan) (*structs.PlanResult, error) {
		if next < len(rivals) && len(plan.Placements) == 1 {
			// A rival scheduled on the same snapshot, chose the same
			// host, and its plan reached the applier first.
			r := rivals[next]
			next++
			a := *plan.Placements[0]
			a.ID, a.InstanceID, a.EvalID = uuid.NewString(), r.Instances[0].ID, r.EvalID
			res, err := s.submitPlan(&structs.Plan{EvalID: r.EvalID, EvalToken: held[r.EvalID].Token,
				SnapshotIndex: plan.SnapshotIndex, Placements: []*structs.Allocation{&a}})
			if err != nil || len(res.Placed) != 1 {
				t.Fatalf("rival %d's plan on %s: %+v, %v", next, a.HostID, res, err)
			}
		}
		return s.submitPlan(plan)
	}
	d := held[victim.EvalID]
	if err := w.process(d.Eval, d.Token, d.WaitIndex); err != nil {
		t.Fatalf("the victim's evaluation failed after %d plans lost to rivals, with hosts still free: %v", next, err)
	}
	if next != len(rivals) {
		t.Fatalf("the rivals took %d hosts first, want %d", next, len(rivals))
	}
	all := []string{victim.Instances[0].ID}
	for _, r := range rivals {
		all = append(all, r.Instances[0].ID)
	}
	state := s.fsm.State()
	used := map[string]string{}
	for _, id := range all {
		inst, err := state.InstanceByID(nil, id)
		if err != nil || inst == nil || inst.HostID == "" {
			t.Fatalf("instance %s not placed: %+v, %v", id, inst, err)
		}
		if other, dup := used[inst.HostID]; dup {
			t.Fatalf("instances %s and %s share one-VCPU host %s", other, id, inst.HostID)
		}
		used[inst.HostID] = id
	}
}

// TestUncontendedRefusalsStillFailAnEvaluation keeps the budget for
// refusals nobody else caused: a plan the applier refuses on a host that
// did not change since the worker's snapshot (here, a host that does not
// exist) is returned to the broker after maxReplans+1 plans rather than
// re-planned forever.
func TestUncontendedRefusalsStillFailAnEvaluation(t *testing.T) {
	t.Parallel()
	s, victim, _, held := contentionSetup(t, 2, 0)
	w := &worker{srv: s}
	plans := 0
	w.planSubmit = func(plan *structs.Plan) (*structs.PlanResult, error) {
		plans++
		for i, a := range plan.Placements {
			c := *a
			c.HostID = "no-such-host"
			plan.Placements[i] = &c
		}
		return s.submitPlan(plan)
	}
	d := held[victim.EvalID]
	if err := w.process(d.Eval, d.Token, d.WaitIndex); err == nil {
		t.Fatal("an evaluation whose every plan is refused for no visible reason succeeded")
	}
	if plans != maxReplans+1 {
		t.Fatalf("%d plans submitted, want %d", plans, maxReplans+1)
	}
}
