package server

import (
	"reflect"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// TestBrokerStatsByTrigger: evaluations are counted by trigger; a ready
// one naming an instance an unacked one holds is blocked.
func TestBrokerStatsByTrigger(t *testing.T) {
	b := newEvalBroker(time.Minute, 3, nil)
	b.SetEnabled(true)
	ev := func(id, trigger string, instances ...string) *structs.Evaluation {
		e := pendingEval(id, instances...)
		e.TriggeredBy = trigger
		return e
	}
	b.Enqueue(ev("c1", structs.EvalTriggerCreate, "i1"))
	if got, _ := dequeueNow(t, b); got == nil || got.ID != "c1" {
		t.Fatalf("dequeued %+v", got)
	}
	b.Enqueue(ev("r1", structs.EvalTriggerResize, "i1"))
	b.Enqueue(ev("c2", structs.EvalTriggerCreate, "i2"))
	want := map[string]EvalBrokerCounts{
		structs.EvalTriggerCreate: {Ready: 1, Unacked: 1},
		structs.EvalTriggerResize: {Ready: 1, Blocked: 1},
	}
	if got := b.statsByTrigger(); !reflect.DeepEqual(got, want) {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}
