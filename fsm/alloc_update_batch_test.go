package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestAllocUpdateBatchRefusesOnlyWhatFailsAndCommitsTheRestAtOnce(t *testing.T) {
	b := newBoot(t)
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: bootHost("h2")})
	b.createAndPlace("2", "h2")
	running := func(host, alloc string) *structs.AllocClientUpdateEntry {
		return &structs.AllocClientUpdateEntry{HostID: host, UpdatedAt: 9, Updates: []*structs.AllocClientUpdate{
			{AllocID: alloc, ClientState: structs.AllocClientRunning, PowerState: structs.PowerRunning}}}
	}
	batch := &structs.AllocClientUpdateBatchEntry{Entries: []*structs.AllocClientUpdateEntry{
		running("h1", "a1"),
		running("h1", "a2"), // another host's allocation: refused
		running("h2", "a2"),
	}}
	resp := b.apply(structs.AllocClientUpdateBatchType, batch)
	errs, ok := resp.([]error)
	if !ok || len(errs) != 3 {
		t.Fatalf("answer %#v", resp)
	}
	if errs[0] != nil || errs[2] != nil || structs.KindOf(errs[1]) != structs.KindPermission {
		t.Fatalf("outcomes %v", errs)
	}
	for _, id := range []string{"i1", "i2"} {
		if i := b.inst(id); i.Status() != "ACTIVE" || i.ModifyIndex != b.index {
			t.Fatalf("%s after the batch: %s at %d, want ACTIVE at %d", id, i.Status(), i.ModifyIndex, b.index)
		}
	}
	a2, _ := b.f.State().AllocationByID(nil, "a2")
	if a2.HostID != "h2" || a2.ClientState != structs.AllocClientRunning {
		t.Fatalf("a2 after the batch %+v", a2)
	}
	if got := b.f.State().LatestIndex(); got != b.index {
		t.Fatalf("latest index %d, want %d", got, b.index)
	}

	// A batch whose every report is refused changes nothing.
	before := b.f.State().LatestIndex()
	resp = b.apply(structs.AllocClientUpdateBatchType, &structs.AllocClientUpdateBatchEntry{Entries: []*structs.AllocClientUpdateEntry{
		running("intruder", "a1"), running("intruder", "a2")}})
	if errs, ok := resp.([]error); !ok || len(errs) != 2 || errs[0] == nil || errs[1] == nil {
		t.Fatalf("all refused: %#v", resp)
	}
	if got := b.f.State().LatestIndex(); got != before {
		t.Fatalf("latest index moved from %d to %d", before, got)
	}
}
