package fsm

import (
	"bytes"
	"io"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestInstanceUpdateSetsAccessIPs: the update entry sets and clears an
// instance's access addresses, the same on every replica, and a
// snapshot keeps them.
func TestInstanceUpdateSetsAccessIPs(t *testing.T) {
	v4, v6 := "203.0.113.7", "2001:db8::7"
	var replicas []*FSM
	for range 2 {
		f := testFSM(t)
		populate(t, f.State())
		if resp := apply(t, f, 10, structs.InstanceUpdateType, &structs.InstanceUpdateEntry{InstanceID: "i1",
			AccessIPv4: &v4, AccessIPv6: &v6, UpdatedAt: 42}); resp != nil {
			t.Fatalf("apply: %v", resp)
		}
		replicas = append(replicas, f)
	}
	for _, f := range replicas {
		inst, err := f.State().InstanceByID(nil, "i1")
		if err != nil || inst.AccessIPv4 != v4 || inst.AccessIPv6 != v6 || inst.UpdatedAt != 42 || inst.ModifyIndex != 10 {
			t.Fatalf("instance %+v %v", inst, err)
		}
	}
	f := replicas[0]
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	g := testFSM(t)
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if inst, _ := g.State().InstanceByID(nil, "i1"); inst.AccessIPv4 != v4 || inst.AccessIPv6 != v6 {
		t.Fatalf("restored %+v", inst)
	}
	// Clearing one leaves the other.
	empty := ""
	if resp := apply(t, f, 11, structs.InstanceUpdateType, &structs.InstanceUpdateEntry{InstanceID: "i1", AccessIPv4: &empty}); resp != nil {
		t.Fatalf("apply: %v", resp)
	}
	if inst, _ := f.State().InstanceByID(nil, "i1"); inst.AccessIPv4 != "" || inst.AccessIPv6 != v6 {
		t.Fatalf("cleared %+v", inst)
	}
}
