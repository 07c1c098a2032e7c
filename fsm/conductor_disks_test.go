package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestMoveSharesTheDisks: a cold migration carrying a disk token gives
// its destination on another host where to fetch the disks (the source
// host's published export) and its source the token; a revert, which
// wants the source running again, takes the token back.
func TestMoveSharesTheDisks(t *testing.T) {
	b := newBootWithExport(t)
	if resp := b.task(structs.OpMigrate, withMove, func(e *structs.InstanceTaskEntry) { e.DiskToken = "tok" }); resp != nil {
		t.Fatal(resp)
	}
	res, _ := structs.FlavorResources(b.inst("i1").Flavor)
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a2", InstanceID: "i1", HostID: "h2",
		EvalID: "e-move", Resources: res, ClientState: structs.AllocClientPending}}})
	a1, _ := b.f.State().AllocationByID(nil, "a1")
	a2, _ := b.f.State().AllocationByID(nil, "a2")
	want := structs.DiskSource{AllocID: "a1", HostID: "h1", URL: "http://h1:4646/v1/client/disks/", Token: "tok"}
	if a2.DiskSource == nil || *a2.DiskSource != want {
		t.Fatalf("destination's disk source %+v, want %+v", a2.DiskSource, want)
	}
	if a1.DiskExportToken != "tok" || a1.DesiredState != structs.AllocDesiredStopped {
		t.Fatalf("source %+v: want it stopping with the token", a1)
	}
	b.reportOn("h1", "a1", structs.AllocClientStopped, structs.PowerShutdown, 0, "")
	b.reportOn("h2", "a2", structs.AllocClientRunning, structs.PowerRunning, 0, "")
	if i := b.inst("i1"); i.Status() != "VERIFY_RESIZE" {
		t.Fatalf("after the destination spawned: %s", i.Status())
	}
	if resp := b.task(structs.OpRevertResize); resp != nil {
		t.Fatal(resp)
	}
	b.reportOn("h2", "a2", structs.AllocClientDeleted, 0, 0, "")
	if a1, _ = b.f.State().AllocationByID(nil, "a1"); a1.DiskExportToken != "" || a1.DesiredState != structs.AllocDesiredRunning {
		t.Fatalf("source after the revert %+v: want it running without the token", a1)
	}
}

// TestMoveWithoutTokenBuildsFresh: an entry from a server older than
// FSMLevelDiskCopy (no token) places the destination as before.
func TestMoveWithoutTokenBuildsFresh(t *testing.T) {
	b := newBootWithExport(t)
	if resp := b.task(structs.OpMigrate, withMove); resp != nil {
		t.Fatal(resp)
	}
	res, _ := structs.FlavorResources(b.inst("i1").Flavor)
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a2", InstanceID: "i1", HostID: "h2",
		EvalID: "e-move", Resources: res, ClientState: structs.AllocClientPending}}})
	a1, _ := b.f.State().AllocationByID(nil, "a1")
	a2, _ := b.f.State().AllocationByID(nil, "a2")
	if a2.DiskSource != nil || a1.DiskExportToken != "" {
		t.Fatalf("a move without a token shares disks: dest %+v source %+v", a2.DiskSource, a1.DiskExportToken)
	}
}

// newBootWithExport is taskFixture with h1 publishing a disk export.
func newBootWithExport(t *testing.T) *bootFixture {
	b := taskFixture(t)
	h1 := b.host("h1").Copy()
	h1.Attributes = map[string]string{structs.HostAttrDiskExportURL: "http://h1:4646/v1/client/disks/"}
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h1})
	return b
}

// TestEvacuationTellsTheDestinationWhereTheDiskIs: an evacuate entry's
// rule for the disk (on_shared_storage, or finding out) reaches the
// destination's allocation, and a destination failing because the disk
// is not where the caller said leaves the instance in ERROR with that
// fault, as Nova's InvalidSharedStorage does.
func TestEvacuationTellsTheDestinationWhereTheDiskIs(t *testing.T) {
	b := taskFixture(t)
	b.mustApply(structs.HostStatusUpdateType, &structs.HostStatusUpdateEntry{HostIDs: []string{"h1"}, Status: structs.HostStatusDown, UpdatedAt: 9})
	if resp := b.task(structs.OpEvacuate, withMove, func(e *structs.InstanceTaskEntry) { e.EvacuateDisk = structs.EvacuateDiskShared }); resp != nil {
		t.Fatal(resp)
	}
	res, _ := structs.FlavorResources(b.inst("i1").Flavor)
	b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a2", InstanceID: "i1", HostID: "h2",
		EvalID: "e-move", Resources: res, ClientState: structs.AllocClientPending}}})
	a2, _ := b.f.State().AllocationByID(nil, "a2")
	if a2 == nil || a2.EvacuateDisk != structs.EvacuateDiskShared || a2.DiskSource != nil {
		t.Fatalf("evacuation's destination %+v: want the shared-storage rule and no disk source", a2)
	}
	b.mustApply(structs.AllocClientUpdateType, &structs.AllocClientUpdateEntry{HostID: "h2", UpdatedAt: int64(100 + b.index),
		Updates: []*structs.AllocClientUpdate{{AllocID: "a2", ClientState: structs.AllocClientFailed, ClientDescription: structs.InvalidSharedStorageMessage}}})
	i := b.inst("i1")
	if i.VMState != structs.VMStateError || i.Fault == nil || i.Fault.Message != structs.InvalidSharedStorageMessage {
		t.Fatalf("after the destination found no disk: vm_state %s fault %+v", i.VMState, i.Fault)
	}
}

// TestLiveMigrationPreparesTheDestination: a live migration carrying a
// token gives its destination the token and its source where and how to
// ask the destination to prepare (the destination's published export);
// once the guest is there, the destination, desired running, no longer
// takes the token. Without a token nothing is prepared.
func TestLiveMigrationPreparesTheDestination(t *testing.T) {
	for _, token := range []string{"tok", ""} {
		b := taskFixture(t)
		h1 := b.host("h1").Copy()
		h1.Capabilities = append(h1.Capabilities, structs.HostCapabilityLiveMigrate)
		h2 := b.host("h2").Copy()
		h2.Attributes = map[string]string{structs.HostAttrDiskExportURL: "http://h2:4646/v1/client/disks/"}
		b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h1})
		b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h2})
		if resp := b.task(structs.OpLiveMigrate, withMove, func(e *structs.InstanceTaskEntry) { e.DiskToken = token }); resp != nil {
			t.Fatal(resp)
		}
		res, _ := structs.FlavorResources(b.inst("i1").Flavor)
		b.mustApply(structs.PlanApplyType, &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a2", InstanceID: "i1", HostID: "h2",
			EvalID: "e-move", Resources: res, ClientState: structs.AllocClientPending}}})
		a1, _ := b.f.State().AllocationByID(nil, "a1")
		a2, _ := b.f.State().AllocationByID(nil, "a2")
		if a1.PendingAction != structs.ActionLiveMigrate || a2.DesiredState != structs.AllocDesiredHeld {
			t.Fatalf("token %q: source %+v destination %+v", token, a1, a2)
		}
		if token == "" {
			if a1.PrepareDest != nil || a2.DiskExportToken != "" {
				t.Fatalf("a migration without a token prepares: %+v, %q", a1.PrepareDest, a2.DiskExportToken)
			}
			continue
		}
		want := structs.DiskSource{AllocID: "a2", HostID: "h2", URL: "http://h2:4646/v1/client/disks/", Token: "tok"}
		if a1.PrepareDest == nil || *a1.PrepareDest != want || a2.DiskExportToken != "tok" {
			t.Fatalf("source's prepare %+v (want %+v), destination's token %q", a1.PrepareDest, want, a2.DiskExportToken)
		}
		b.reportOn("h1", "a1", structs.AllocClientRunning, structs.PowerRunning, a1.ActionSeq, "")
		if a2, _ = b.f.State().AllocationByID(nil, "a2"); a2.DesiredState != structs.AllocDesiredRunning || a2.DiskExportToken != "" {
			t.Fatalf("destination after the migration %+v: want it running without the token", a2)
		}
	}
}
