package fsm

import (
	"bytes"
	"io"
	"slices"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// hookedBoot is a booted instance i1 on h1 with a second host h2, and an
// eval hook recording what it hears, by eval id.
func hookedBoot(t *testing.T) (*bootFixture, *[]string) {
	b := taskFixture(t)
	var heard []string
	b.f.SetEvalHook(func(evs []*structs.Evaluation) {
		for _, ev := range evs {
			if ev.CreateIndex != b.index || ev.Status != structs.EvalStatusPending {
				t.Errorf("announced %+v at index %d", ev, b.index)
			}
			heard = append(heard, ev.ID)
		}
	})
	return b, &heard
}

// TestEvalHookHearsCommittedEvaluations: the hook hears of the
// evaluations a create, a move and an agent's reschedule commit — and of
// nothing a refused entry or an entry without one carries.
func TestEvalHookHearsCommittedEvaluations(t *testing.T) {
	b, heard := hookedBoot(t)
	b.mustApply(structs.InstanceCreateType, &structs.InstanceCreateEntry{
		Instances: []*structs.Instance{bootInstance("i2")},
		Eval:      &structs.Evaluation{ID: "e2", InstanceIDs: []string{"i2"}, Status: structs.EvalStatusPending},
	})
	if resp := b.task(structs.OpResize, withMove, func(e *structs.InstanceTaskEntry) { e.NewFlavor = structs.DevFlavors()[1] }); resp != nil {
		t.Fatal(resp)
	}
	// A second move of the same instance is refused: nothing to hear.
	refused := func(e *structs.InstanceTaskEntry) {
		withMove(e)
		e.Eval.ID = "e-refused"
	}
	if resp := b.task(structs.OpMigrate, refused); resp == nil {
		t.Fatal("a second move was accepted")
	}
	b.mustApply(structs.AllocClientUpdateType, &structs.AllocClientUpdateEntry{HostID: "h1", UpdatedAt: 9,
		Reschedules: []*structs.Evaluation{{ID: "e-resched", InstanceIDs: []string{"i2"}, Status: structs.EvalStatusPending}}})
	if want := []string{"e2", "e-move", "e-resched"}; !slices.Equal(*heard, want) {
		t.Fatalf("heard %v, want %v", *heard, want)
	}
}

// TestEvalHookSurvivesRestore: a restored state store keeps the hook.
func TestEvalHookSurvivesRestore(t *testing.T) {
	b, heard := hookedBoot(t)
	var buf bytes.Buffer
	if err := b.f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	if err := b.f.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	b.mustApply(structs.InstanceCreateType, &structs.InstanceCreateEntry{
		Instances: []*structs.Instance{bootInstance("i2")},
		Eval:      &structs.Evaluation{ID: "e2", InstanceIDs: []string{"i2"}, Status: structs.EvalStatusPending},
	})
	if want := []string{"e2"}; !slices.Equal(*heard, want) {
		t.Fatalf("heard %v, want %v", *heard, want)
	}
}
