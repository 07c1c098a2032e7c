package fsm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestCreateBatchRefusesOnlyWhatFailsAndCommitsTheRestAtOnce(t *testing.T) {
	f := testFSM(t)
	apply(t, f, 1, structs.QuotaUpdateType, &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1",
		Set: map[string]int64{structs.QuotaInstances: 2}})
	batch := &structs.InstanceCreateBatchEntry{}
	for i := range 4 {
		inst := bootInstance(fmt.Sprintf("b%d", i))
		inst.ProjectID = "p1"
		if i == 3 {
			inst.ProjectID = "p2" // another project: not limited
		}
		ev := &structs.Evaluation{ID: fmt.Sprintf("e%d", i), InstanceIDs: []string{inst.ID}, Status: structs.EvalStatusPending}
		batch.Entries = append(batch.Entries, &structs.InstanceCreateEntry{Instances: []*structs.Instance{inst}, Eval: ev})
	}
	resp := apply(t, f, 2, structs.InstanceCreateBatchType, batch)
	errs, ok := resp.([]error)
	if !ok || len(errs) != 4 {
		t.Fatalf("answer %#v", resp)
	}
	for i, err := range errs {
		refused := i == 2 // the third create of p1 passes its quota of 2
		if refused != (err != nil) || (refused && !strings.Contains(err.Error(), "Quota exceeded for instances")) {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	state := f.State()
	for i, want := range []bool{true, true, false, true} {
		inst, _ := state.InstanceByID(nil, fmt.Sprintf("b%d", i))
		ev, _ := state.EvalByID(nil, fmt.Sprintf("e%d", i))
		if (inst != nil) != want || (ev != nil) != want {
			t.Fatalf("create %d: instance %v, evaluation %v, want them: %v", i, inst != nil, ev != nil, want)
		}
		if want && (inst.CreateIndex != 2 || ev.ModifyIndex != 2) {
			t.Fatalf("create %d committed at %d/%d, not at the entry's index", i, inst.CreateIndex, ev.ModifyIndex)
		}
	}
	if got := state.LatestIndex(); got != 2 {
		t.Fatalf("latest index %d", got)
	}
}
