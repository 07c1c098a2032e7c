package fsm

import (
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

func TestUsageSourcesKeepsDeletedInstances(t *testing.T) {
	s, err := NewStateStore()
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	fl := &structs.Flavor{ID: "f", Name: "m1.eph", VCPUs: 2, MemoryMB: 1024, RootGB: 10, EphemeralGB: 5}
	must(s.UpsertInstance(1, &structs.Instance{ID: "a", Name: "a", ProjectID: "p1", UserID: "u", Flavor: fl,
		VMState: structs.VMStateActive, CreatedAt: 100}))
	must(s.UpsertInstance(2, &structs.Instance{ID: "b", Name: "b", ProjectID: "p1", UserID: "u", Flavor: fl,
		VMState: structs.VMStateStopped, CreatedAt: 200}))
	must(s.UpsertInstance(3, &structs.Instance{ID: "c", Name: "c", ProjectID: "p2", UserID: "v", Flavor: fl,
		VMState: structs.VMStateActive, CreatedAt: 300}))

	ws := memdb.NewWatchSet()
	live, deleted, index, err := s.UsageSources(ws, "p1")
	must(err)
	if len(live) != 2 || live[0].ID != "a" || live[1].ID != "b" || len(deleted) != 0 || index != 3 {
		t.Fatalf("before the delete: live %v deleted %v index %d", live, deleted, index)
	}

	// Purging b moves it to the usage records, and wakes the watcher.
	must(s.DeleteInstances(4, &structs.InstanceDeleteEntry{Purge: []string{"b"}, UpdatedAt: 900}))
	if ws.Watch(time.After(5 * time.Second)) {
		t.Fatal("the purge did not fire the watch")
	}
	live, deleted, index, err = s.UsageSources(nil, "p1")
	must(err)
	if len(live) != 1 || live[0].ID != "a" || len(deleted) != 1 || index != 4 {
		t.Fatalf("after the delete: live %v deleted %v index %d", live, deleted, index)
	}
	want := structs.InstanceUsage{InstanceID: "b", Name: "b", ProjectID: "p1", UserID: "u", FlavorName: "m1.eph", VCPUs: 2,
		MemoryMB: 1024, LocalGB: 15, State: structs.VMStateStopped, CreatedAt: 200, DeletedAt: 900, CreateIndex: 4, ModifyIndex: 4}
	if *deleted[0] != want {
		t.Fatalf("usage record %+v, want %+v", *deleted[0], want)
	}

	// Every project's.
	live, deleted, _, err = s.UsageSources(nil, "")
	must(err)
	if len(live) != 2 || live[1].ID != "c" || len(deleted) != 1 {
		t.Fatalf("all projects: live %v deleted %v", live, deleted)
	}
	if live, deleted, _, err = s.UsageSources(nil, "p3"); err != nil || len(live)+len(deleted) != 0 {
		t.Fatalf("unknown project: %v %v %v", live, deleted, err)
	}
}
