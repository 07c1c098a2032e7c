package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestRecordInstanceAction applies recorded actions: stored with their
// event, a retried entry changes nothing, a missing instance or an
// incomplete action is refused.
func TestRecordInstanceAction(t *testing.T) {
	f := testFSM(t)
	inst := &structs.Instance{ID: "i-1", Name: "vm", VMState: structs.VMStateActive, Flavor: &structs.Flavor{ID: "1"}}
	if resp := apply(t, f, 1, structs.InstanceCreateType, &structs.InstanceCreateEntry{Instances: []*structs.Instance{inst}}); resp != nil {
		t.Fatalf("create: %v", resp)
	}
	a := &structs.InstanceAction{RequestID: "req-1", InstanceID: "i-1", Action: "changePassword", StartTime: 10, UpdatedAt: 20,
		Events: []*structs.InstanceActionEvent{{Event: "compute_set_admin_password", StartTime: 10, FinishTime: 20, Result: structs.EventSuccess}}}
	if resp := apply(t, f, 2, structs.InstanceActionRecordType, &structs.InstanceActionRecordEntry{Action: a}); resp != nil {
		t.Fatalf("record: %v", resp)
	}
	retry := a.Copy()
	retry.Events[0].Result = structs.EventError
	if resp := apply(t, f, 3, structs.InstanceActionRecordType, &structs.InstanceActionRecordEntry{Action: retry}); resp != nil {
		t.Fatalf("retried record: %v", resp)
	}
	got, err := f.State().InstanceActionByID(nil, "i-1", "req-1")
	if err != nil || got == nil || got.CreateIndex != 2 || got.ModifyIndex != 2 || len(got.Events) != 1 ||
		got.Events[0].Result != structs.EventSuccess || got.UpdatedAt != 20 {
		t.Fatalf("recorded action %+v, %v", got, err)
	}
	missing := a.Copy()
	missing.InstanceID = "nope"
	if resp := apply(t, f, 4, structs.InstanceActionRecordType, &structs.InstanceActionRecordEntry{Action: missing}); structs.KindOf(resp.(error)) != structs.KindNotFound {
		t.Fatalf("record on a missing instance: %v", resp)
	}
	if resp := apply(t, f, 5, structs.InstanceActionRecordType, &structs.InstanceActionRecordEntry{}); structs.KindOf(resp.(error)) != structs.KindInvalid {
		t.Fatalf("record of nothing: %v", resp)
	}
}
