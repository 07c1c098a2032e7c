package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestReapRemovesOnlyOldFinishedEvaluations(t *testing.T) {
	f := testFSM(t)
	s := f.State()
	for i, ev := range []*structs.Evaluation{
		{ID: "old-done", Status: structs.EvalStatusComplete, CreatedAt: 100},
		{ID: "old-failed", Status: structs.EvalStatusFailed, CreatedAt: 100},
		{ID: "old-pending", Status: structs.EvalStatusPending, CreatedAt: 100},
		{ID: "new-done", Status: structs.EvalStatusComplete, CreatedAt: 300},
	} {
		if err := s.UpsertEval(uint64(10+i), ev); err != nil {
			t.Fatal(err)
		}
	}
	if oldest, ok, err := s.OldestFinishedEval(); err != nil || !ok || oldest != 100 {
		t.Fatalf("oldest finished: %d %v %v", oldest, ok, err)
	}
	if resp := apply(t, f, 20, structs.EvalReapType|structs.IgnoreUnknownTypeFlag, &structs.EvalReapEntry{Before: 200}); resp != nil {
		t.Fatal(resp)
	}
	for id, want := range map[string]bool{"old-done": false, "old-failed": false, "old-pending": true, "new-done": true} {
		if ev, _ := s.EvalByID(nil, id); (ev != nil) != want {
			t.Errorf("evaluation %s kept: %v, want %v", id, ev != nil, want)
		}
	}
	if got := s.Index(TableEvals); got != 20 {
		t.Fatalf("evals index %d", got)
	}
	// Nothing old left: the reap writes nothing.
	if resp := apply(t, f, 21, structs.EvalReapType, &structs.EvalReapEntry{Before: 200}); resp != nil {
		t.Fatal(resp)
	}
	if got := s.Index(TableEvals); got != 20 {
		t.Fatalf("an empty reap moved the index to %d", got)
	}
}
