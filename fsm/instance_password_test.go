package fsm

import (
	"bytes"
	"io"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestInstancePasswordSetOnceAndClear applies password entries: the
// first set wins, a second is a conflict that writes nothing, a clear
// allows a new set, and the password survives a snapshot.
func TestInstancePasswordSetOnceAndClear(t *testing.T) {
	f := testFSM(t)
	inst := &structs.Instance{ID: "i-1", Name: "vm", VMState: structs.VMStateBuilding, Flavor: &structs.Flavor{ID: "1"}}
	if resp := apply(t, f, 1, structs.InstanceCreateType, &structs.InstanceCreateEntry{Instances: []*structs.Instance{inst}}); resp != nil {
		t.Fatalf("create: %v", resp)
	}
	password := func() (string, uint64) {
		got, err := f.State().InstanceByID(nil, "i-1")
		if err != nil || got == nil {
			t.Fatalf("instance: %v %v", got, err)
		}
		return got.Password(), got.ModifyIndex
	}
	if resp := apply(t, f, 2, structs.InstancePasswordSetType, &structs.InstancePasswordEntry{InstanceID: "i-1", Password: "first"}); resp != nil {
		t.Fatalf("set: %v", resp)
	}
	resp := apply(t, f, 3, structs.InstancePasswordSetType, &structs.InstancePasswordEntry{InstanceID: "i-1", Password: "second"})
	if err, _ := resp.(error); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("second set: %v, want a conflict", resp)
	}
	if pw, idx := password(); pw != "first" || idx != 2 {
		t.Fatalf("password %q at %d after a refused set", pw, idx)
	}
	if resp := apply(t, f, 4, structs.InstancePasswordSetType, &structs.InstancePasswordEntry{InstanceID: "nope", Password: "x"}); structs.KindOf(resp.(error)) != structs.KindNotFound {
		t.Fatalf("set on a missing instance: %v", resp)
	}
	if resp := apply(t, f, 5, structs.InstancePasswordClearType, &structs.InstancePasswordEntry{InstanceID: "i-1"}); resp != nil {
		t.Fatalf("clear: %v", resp)
	}
	if pw, _ := password(); pw != "" {
		t.Fatalf("password %q after clear", pw)
	}
	if resp := apply(t, f, 6, structs.InstancePasswordSetType, &structs.InstancePasswordEntry{InstanceID: "i-1", Password: "again"}); resp != nil {
		t.Fatalf("set after clear: %v", resp)
	}

	var buf bytes.Buffer
	if err := f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	restored := testFSM(t)
	if err := restored.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	got, err := restored.State().InstanceByID(nil, "i-1")
	if err != nil || got == nil || got.Password() != "again" {
		t.Fatalf("restored instance %+v: %v", got, err)
	}
}
