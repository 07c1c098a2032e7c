package fsm

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/structs"
)

// purgeFixture writes, for each instance named, a create action, a
// migration and a console token, then deletes (purges) each instance of
// deletedAt at that time; instances without a time stay live. It
// returns the next free index.
func purgeFixture(t *testing.T, s *StateStore, index uint64, ids []string, deletedAt map[string]int64) uint64 {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	fl := &structs.Flavor{ID: "f", Name: "m1.tiny", VCPUs: 1, MemoryMB: 512, RootGB: 1}
	for _, id := range ids {
		must(s.UpsertInstance(index, &structs.Instance{ID: id, Name: id, ProjectID: "p1", UserID: "u", Flavor: fl,
			VMState: structs.VMStateActive, HostID: "h1", CreatedAt: 1}))
		must(s.RecordInstanceAction(index+1, &structs.InstanceActionRecordEntry{Action: &structs.InstanceAction{
			InstanceID: id, RequestID: "req-create-" + id, Action: "create", ProjectID: "p1", StartTime: 1}}))
		txn := s.writeTxn()
		if _, err := insertMigration(txn, index+2, &structs.Migration{InstanceID: id, Status: structs.MigrationError}); err != nil {
			txn.Abort()
			t.Fatal(err)
		}
		if err := txn.Insert(TableConsoleTokens, &structs.ConsoleAuthToken{TokenHash: "tok-" + id, InstanceID: id,
			ConsoleType: "novnc", HostID: "h1", Target: "127.0.0.1:5900", ExpiresAt: 1 << 62}); err != nil {
			txn.Abort()
			t.Fatal(err)
		}
		must(commitAt(txn, index+2, TableMigrations, TableConsoleTokens))
		index += 3
	}
	for _, id := range ids {
		at, ok := deletedAt[id]
		if !ok {
			continue
		}
		must(s.DeleteInstances(index, &structs.InstanceDeleteEntry{Purge: []string{id}, RequestID: "req-delete-" + id, UpdatedAt: at}))
		index++
	}
	return index
}

// keptRecords says, per instance, which of its records the state holds.
func keptRecords(t *testing.T, s *StateStore, id string) (usage, actions, migrations, token bool) {
	t.Helper()
	us, err := s.DeletedUsages(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range us {
		usage = usage || u.InstanceID == id
	}
	acts, err := s.InstanceActions(nil, id)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := s.MigrationsByInstance(nil, id)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.ConsoleToken(nil, "tok-"+id)
	if err != nil {
		t.Fatal(err)
	}
	return usage, len(acts) > 0, len(ms) > 0, tok != nil
}

func applyPurge(t *testing.T, f *FSM, index uint64, before int64, limit int) *structs.DeletedPurgeResult {
	t.Helper()
	resp := apply(t, f, index, structs.DeletedPurgeType|structs.IgnoreUnknownTypeFlag, &structs.DeletedPurgeEntry{Before: before, Limit: limit})
	res, ok := resp.(*structs.DeletedPurgeResult)
	if !ok {
		t.Fatalf("purge answered %T %v", resp, resp)
	}
	return res
}

func TestPurgeDeletedRemovesOnlyRecordsOfServersDeletedBeforeTheCutOff(t *testing.T) {
	f := testFSM(t)
	s := f.State()
	next := purgeFixture(t, s, 10, []string{"old1", "old2", "recent", "live"},
		map[string]int64{"old1": 100, "old2": 150, "recent": 300})
	if oldest, ok, err := s.OldestDeleted(); err != nil || !ok || oldest != 100 {
		t.Fatalf("oldest deleted: %d %v %v", oldest, ok, err)
	}
	for _, id := range []string{"old1", "old2", "recent"} {
		if u, a, m, _ := keptRecords(t, s, id); !u || !a || !m {
			t.Fatalf("%s before the purge: usage %v actions %v migrations %v", id, u, a, m)
		}
	}

	res := applyPurge(t, f, next, 200, structs.DeletedPurgeBatch)
	if res.Purged != 2 || res.More {
		t.Fatalf("purge result %+v, want 2 purged and no more", res)
	}
	for id, want := range map[string][4]bool{
		"old1":   {false, false, false, false},
		"old2":   {false, false, false, false},
		"recent": {true, true, true, true},
		"live":   {false, true, true, true},
	} {
		u, a, m, tok := keptRecords(t, s, id)
		if got := [4]bool{u, a, m, tok}; got != want {
			t.Errorf("%s: kept usage/actions/migrations/token %v, want %v", id, got, want)
		}
	}
	if live, _ := s.InstanceByID(nil, "live"); live == nil {
		t.Fatal("the purge removed a live instance")
	}
	for _, table := range []string{TableInstanceUsages, TableInstanceActions, TableMigrations, TableConsoleTokens} {
		if got := s.Index(table); got != next {
			t.Errorf("index of %s = %d, want %d", table, got, next)
		}
	}
	if oldest, ok, _ := s.OldestDeleted(); !ok || oldest != 300 {
		t.Fatalf("oldest deleted after the purge: %d %v", oldest, ok)
	}

	// Idempotent: the same entry again finds nothing and changes no
	// index.
	if res := applyPurge(t, f, next+1, 200, structs.DeletedPurgeBatch); res.Purged != 0 || res.More {
		t.Fatalf("second purge %+v", res)
	}
	for _, table := range []string{TableInstanceUsages, TableInstanceActions, TableMigrations, TableConsoleTokens} {
		if got := s.Index(table); got != next {
			t.Errorf("an empty purge moved the index of %s to %d", table, got)
		}
	}
	// A cut-off past every deletion leaves no deleted records at all.
	if res := applyPurge(t, f, next+2, 1<<62, 0); res.Purged != 1 || res.More {
		t.Fatalf("purge of everything %+v", res)
	}
	if _, ok, _ := s.OldestDeleted(); ok {
		t.Fatal("deleted records left after purging everything")
	}
}

func TestPurgeDeletedIsBoundedPerEntryOldestFirst(t *testing.T) {
	f := testFSM(t)
	s := f.State()
	ids := []string{"e", "d", "c", "b", "a"}
	// Deleted in reverse name order, two at the same time: the batch
	// follows the deletion time, then the id.
	next := purgeFixture(t, s, 10, ids, map[string]int64{"e": 10, "d": 20, "c": 30, "b": 30, "a": 50})
	want := [][]string{{"e", "d"}, {"b", "c"}, {"a"}}
	for i, gone := range want {
		res := applyPurge(t, f, next+uint64(i), 1000, 2)
		if res.Purged != len(gone) || res.More != (i < len(want)-1) {
			t.Fatalf("entry %d: %+v", i, res)
		}
		for _, id := range gone {
			if u, a, _, _ := keptRecords(t, s, id); u || a {
				t.Fatalf("entry %d left records of %s", i, id)
			}
		}
	}
	// A limit beyond the fixed maximum is clamped, not trusted.
	if res, err := s.PurgeDeleted(next+10, 1000, structs.DeletedPurgeMaxBatch*10); err != nil || res.Purged != 0 {
		t.Fatalf("clamped purge of nothing: %+v %v", res, err)
	}
}

func snapshotBytes(t *testing.T, f *FSM) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	return sink.Bytes()
}

func TestPurgeDeletedIsDeterministicAndSurvivesSnapshotRestore(t *testing.T) {
	build := func() (*FSM, uint64) {
		f := testFSM(t)
		next := purgeFixture(t, f.State(), 10, []string{"a", "b", "c", "d"}, map[string]int64{"a": 100, "b": 200, "c": 300})
		return f, next
	}
	f, next := build()
	g, _ := build()
	// A replica restored from a snapshot taken before the purge builds
	// the deletion index from the records and purges the same ones.
	h := testFSM(t)
	if err := h.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, f)))); err != nil {
		t.Fatal(err)
	}
	if oldest, ok, err := h.State().OldestDeleted(); err != nil || !ok || oldest != 100 {
		t.Fatalf("restored oldest deleted: %d %v %v", oldest, ok, err)
	}
	for _, r := range []*FSM{f, g, h} {
		if res := applyPurge(t, r, next, 250, 1); res.Purged != 1 || !res.More {
			t.Fatalf("first entry %+v", res)
		}
		if res := applyPurge(t, r, next+1, 250, 1); res.Purged != 1 || res.More {
			t.Fatalf("second entry %+v", res)
		}
	}
	want := snapshotBytes(t, f)
	for name, r := range map[string]*FSM{"replica": g, "restored replica": h} {
		if got := snapshotBytes(t, r); !bytes.Equal(got, want) {
			t.Fatalf("%s differs after the same purges (%d vs %d bytes)", name, len(got), len(want))
		}
	}
	// What is left survives a snapshot and restore, and purges the same.
	i := testFSM(t)
	if err := i.Restore(io.NopCloser(bytes.NewReader(want))); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dump(t, f.State()), dump(t, i.State())) {
		t.Fatal("restored state differs")
	}
	for _, r := range []*FSM{f, i} {
		if res := applyPurge(t, r, next+2, 1<<62, 0); res.Purged != 1 {
			t.Fatalf("final purge %+v", res)
		}
		if u, a, m, _ := keptRecords(t, r.State(), "c"); u || a || m {
			t.Fatal("records of c left")
		}
		if _, a, _, _ := keptRecords(t, r.State(), "d"); !a {
			t.Fatal("the live instance lost its actions")
		}
	}
}

func TestPurgeDeletedRejectsMalformedEntries(t *testing.T) {
	f := testFSM(t)
	buf, err := structs.EncodeEntry(structs.DeletedPurgeType, &structs.DeletedPurgeEntry{Before: 1})
	if err != nil {
		t.Fatal(err)
	}
	buf = append(buf[:2], 0xc1) // never valid msgpack
	if resp := f.Apply(&raft.Log{Index: 5, Type: raft.LogCommand, Data: buf}); resp == nil {
		t.Fatal("a malformed purge entry applied")
	} else if _, ok := resp.(error); !ok {
		t.Fatalf("a malformed purge entry answered %T", resp)
	}
}
