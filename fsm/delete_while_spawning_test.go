package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestLateSpawningReportKeepsTheDelete: an agent's "spawning" report sent
// before it saw a delete, applied after it, must not turn the deleting
// instance back into a spawning one, or the agent's "deleted" report
// would leave it in BUILD forever (found by e2e/robustness).
func TestLateSpawningReportKeepsTheDelete(t *testing.T) {
	b := newBoot(t)
	b.mustApply(structs.InstanceDeleteType, &structs.InstanceDeleteEntry{Deleting: []string{"i1"}})
	if resp := b.report(structs.AllocClientSpawning, 0, 0, ""); resp != nil {
		t.Fatalf("late spawning report: %v", resp)
	}
	if i := b.inst("i1"); i == nil || i.TaskState != structs.TaskDeleting {
		t.Fatalf("after a late spawning report: %+v", i)
	}
	b.report(structs.AllocClientDeleted, 0, 0, "")
	if i := b.inst("i1"); i != nil {
		t.Fatalf("instance survived its delete: %+v", i)
	}
}
