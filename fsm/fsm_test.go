package fsm

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/structs"
)

func testFSM(t *testing.T) *FSM {
	t.Helper()
	f, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func apply(t *testing.T, f *FSM, index uint64, mt structs.MessageType, body any) any {
	t.Helper()
	buf, err := structs.EncodeEntry(mt, body)
	if err != nil {
		t.Fatal(err)
	}
	return f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: buf})
}

func TestApplyFlavorUpsertAndDelete(t *testing.T) {
	f := testFSM(t)
	if resp := apply(t, f, 10, structs.FlavorUpsertRequestType, &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()}); resp != nil {
		t.Fatalf("upsert: %v", resp)
	}
	got, err := f.State().Flavors(nil)
	if err != nil || len(got) != 5 {
		t.Fatalf("flavors = %d, %v", len(got), err)
	}
	if got[0].ID != "1" || got[0].CreateIndex != 10 || got[0].ModifyIndex != 10 {
		t.Fatalf("first flavor %+v", got[0])
	}
	// Replacing keeps CreateIndex and bumps ModifyIndex.
	tiny := got[0].Copy()
	tiny.VCPUs = 2
	if resp := apply(t, f, 11, structs.FlavorUpsertRequestType, &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{tiny}}); resp != nil {
		t.Fatalf("update: %v", resp)
	}
	f1, _ := f.State().FlavorByIDOrName(nil, "m1.tiny")
	if f1.VCPUs != 2 || f1.CreateIndex != 10 || f1.ModifyIndex != 11 {
		t.Fatalf("updated flavor %+v", f1)
	}
	if idx := f.State().Index(TableFlavors); idx != 11 {
		t.Fatalf("table index %d", idx)
	}

	if resp := apply(t, f, 12, structs.FlavorDeleteRequestType, &structs.FlavorDeleteRequest{IDs: []string{"1", "2"}}); resp != nil {
		t.Fatalf("delete: %v", resp)
	}
	got, _ = f.State().Flavors(nil)
	if len(got) != 3 {
		t.Fatalf("after delete %d flavors", len(got))
	}
	// Deleting a missing flavor fails the whole request.
	resp := apply(t, f, 13, structs.FlavorDeleteRequestType, &structs.FlavorDeleteRequest{IDs: []string{"3", "nope"}})
	if err, ok := resp.(error); !ok || structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("delete missing = %v", resp)
	}
	if got, _ = f.State().Flavors(nil); len(got) != 3 {
		t.Fatalf("partial delete: %d flavors left", len(got))
	}
}

func TestApplyFlavorNameConflictWritesNothing(t *testing.T) {
	f := testFSM(t)
	apply(t, f, 1, structs.FlavorUpsertRequestType, &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()})
	dup := &structs.Flavor{ID: "99", Name: "m1.tiny", VCPUs: 1, MemoryMB: 1}
	fresh := &structs.Flavor{ID: "100", Name: "fresh", VCPUs: 1, MemoryMB: 1}
	resp := apply(t, f, 2, structs.FlavorUpsertRequestType, &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{fresh, dup}})
	if err, ok := resp.(error); !ok || structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("resp = %v", resp)
	}
	if fl, _ := f.State().FlavorByID(nil, "100"); fl != nil {
		t.Fatal("a failed request wrote part of itself")
	}
}

func TestApplyKeyPairs(t *testing.T) {
	f := testFSM(t)
	kp := &structs.KeyPair{Name: "ops", UserID: "u1", Type: "ssh", PublicKey: "ssh-ed25519 AAAA", CreatedAt: 42}
	if resp := apply(t, f, 5, structs.KeyPairUpsertRequestType, &structs.KeyPairUpsertRequest{KeyPairs: []*structs.KeyPair{kp}}); resp != nil {
		t.Fatal(resp)
	}
	got, _ := f.State().KeyPair(nil, "u1", "ops")
	if got == nil || got.CreatedAt != 42 || got.CreateIndex != 5 {
		t.Fatalf("keypair %+v", got)
	}
	if other, _ := f.State().KeyPair(nil, "u2", "ops"); other != nil {
		t.Fatal("key pairs leak between users")
	}
	if resp := apply(t, f, 6, structs.KeyPairDeleteRequestType, &structs.KeyPairDeleteRequest{UserID: "u1", Names: []string{"ops"}}); resp != nil {
		t.Fatal(resp)
	}
	if list, _ := f.State().KeyPairsByUser(nil, "u1"); len(list) != 0 {
		t.Fatalf("left %d", len(list))
	}
}

// flavorV0 is the flavor as a version-0 entry carried it, before extra
// specs and descriptions existed.
type flavorV0 struct {
	ID       string
	Name     string
	VCPUs    int
	MemoryMB int
	RootGB   int
}

func TestOlderVersionEntryIsApplied(t *testing.T) {
	f := testFSM(t)
	body := struct{ Flavors []*flavorV0 }{Flavors: []*flavorV0{{ID: "7", Name: "old", VCPUs: 1, MemoryMB: 64, RootGB: 1}}}
	buf, err := structs.EncodeEntryVersion(structs.FlavorUpsertRequestType, 0, body)
	if err != nil {
		t.Fatal(err)
	}
	if resp := f.Apply(&raft.Log{Index: 3, Type: raft.LogCommand, Data: buf}); resp != nil {
		t.Fatal(resp)
	}
	got, _ := f.State().FlavorByID(nil, "7")
	if got == nil || got.MemoryMB != 64 || got.ExtraSpecs == nil {
		t.Fatalf("old entry applied as %+v", got)
	}
}

func TestUnknownEntries(t *testing.T) {
	f := testFSM(t)
	buf, _ := structs.EncodeEntry(structs.IgnoreUnknownTypeFlag|100, map[string]string{"x": "y"})
	if resp := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: buf}); resp != nil {
		t.Fatalf("ignorable unknown entry: %v", resp)
	}
	if f.State().LatestIndex() != 0 {
		t.Fatal("ignorable entry changed state")
	}
	buf, _ = structs.EncodeEntry(100, map[string]string{"x": "y"})
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("a mandatory unknown entry must stop the server")
			}
		}()
		f.Apply(&raft.Log{Index: 2, Type: raft.LogCommand, Data: buf})
	}()
	if resp := f.Apply(&raft.Log{Index: 3, Type: raft.LogCommand, Data: []byte{1}}); resp == nil {
		t.Fatal("truncated entry accepted")
	}
}

func populate(t *testing.T, s *StateStore) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.UpsertFlavors(1, structs.DevFlavors()))
	must(s.UpsertKeyPairs(2, []*structs.KeyPair{{Name: "k", UserID: "u", Type: "ssh", PublicKey: "ssh-rsa A"}}))
	must(s.UpsertHost(3, &structs.Host{ID: "h1", Name: "hv1", Status: structs.HostStatusUp, Enabled: true,
		Inventories: map[string]*structs.Inventory{structs.ResourceVCPU: {Total: 8, MaxUnit: 8, MinUnit: 1, StepSize: 1, AllocationRatio: 16}},
		Traits:      []string{"HW_CPU_X86_AVX2"}, Attributes: map[string]string{"arch": "x86_64"}}))
	must(s.UpsertInstance(4, &structs.Instance{ID: "i1", Name: "web", Flavor: structs.DevFlavors()[0], HostID: "h1",
		VMState: structs.VMStateActive, PowerState: structs.PowerRunning, Metadata: map[string]string{"a": "b"}}))
	must(s.UpsertAllocation(5, &structs.Allocation{ID: "a1", InstanceID: "i1", HostID: "h1", Resources: map[string]int64{"VCPU": 1}}))
	must(s.UpsertEval(6, &structs.Evaluation{ID: "e1", InstanceIDs: []string{"i1"}, Status: structs.EvalStatusComplete}))
	txn := s.writeTxn()
	must(insertAction(txn, 6, &structs.InstanceAction{RequestID: "req-1", InstanceID: "i1", Action: "create",
		Events: []*structs.InstanceActionEvent{{Event: evBuild, StartTime: 1, FinishTime: 2, Result: structs.EventSuccess}}}))
	_, err := insertMigration(txn, 6, &structs.Migration{UUID: "m", InstanceID: "i1", Type: structs.MigrationTypeResize, Status: structs.MigrationFinished})
	must(err)
	must(recordDeletedUsage(txn, 6, &structs.Instance{ID: "gone", Name: "old", ProjectID: "p1", Flavor: structs.DevFlavors()[0], CreatedAt: 1}, 2))
	must(commitAt(txn, 6, TableInstanceActions, TableMigrations, TableInstanceUsages))
	populateIdentity(t, s)
	populateAppCreds(t, s)
	populatePlacement(t, s)
	populateImages(t, s)
	populateS3(t, s)
	populateNetworks(t, s)
	populatePortLeases(t, s)
	populateGroups(t, s)
	populateSchedulerConfig(t, s)
	populateClusterCA(t, s)
	populateConsoles(t, s)
	populateUserQuotas(t, s)
	populateImageCache(t, s)
	populateCreateRequests(t, s)
	populateTaskRequests(t, s)
	populateVolumes(t, s)
}

func dump(t *testing.T, s *StateStore) map[string][]any {
	t.Helper()
	out := map[string][]any{}
	txn := s.ReadTxn()
	for _, st := range snapshotTables {
		it, err := txn.Get(st.table, "id")
		if err != nil {
			t.Fatal(err)
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			out[st.table] = append(out[st.table], raw)
		}
	}
	return out
}

func TestSnapshotRestoreIsIdentical(t *testing.T) {
	f := testFSM(t)
	populate(t, f.State())
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()

	g := testFSM(t)
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	want, got := dump(t, f.State()), dump(t, g.State())
	if len(want) != len(snapshotTables) {
		t.Fatalf("populate filled %d of %d tables", len(want), len(snapshotTables))
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("restored state differs:\nwant %#v\ngot  %#v", want, got)
	}
	if g.State().LatestIndex() != 6 {
		t.Fatalf("restored index %d", g.State().LatestIndex())
	}
}

func TestRestoreRejectsGarbageAndKeepsState(t *testing.T) {
	f := testFSM(t)
	populate(t, f.State())
	for _, in := range [][]byte{nil, []byte("not a snapshot"), {byte(structs.FlavorSnapshot), 1, 0xc0}} {
		if err := f.Restore(io.NopCloser(bytes.NewReader(in))); err == nil {
			t.Fatalf("restore of %q succeeded", in)
		}
	}
	if fl, _ := f.State().Flavors(nil); len(fl) != 5 {
		t.Fatal("failed restore changed state")
	}
}

func TestRestoreSkipsIgnorableUnknownRecords(t *testing.T) {
	f := testFSM(t)
	populate(t, f.State())
	var buf bytes.Buffer
	if err := f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	extra, _ := structs.Encode(map[string]string{"future": "record"})
	buf.Write(append([]byte{byte(structs.IgnoreUnknownSnapshotFlag | 127), 1}, extra...))
	s, err := ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := s.HostByID(nil, "h1"); h == nil {
		t.Fatal("host lost")
	}
}

func TestBlockingQueryWakesOnWriteAndRestore(t *testing.T) {
	f := testFSM(t)
	populate(t, f.State())
	start := f.State().Index(TableFlavors)
	query := func(ws memdb.WatchSet, s *StateStore) (any, uint64, error) {
		fl, err := s.Flavors(ws)
		return fl, s.Index(TableFlavors), err
	}
	done := make(chan uint64, 1)
	go func() {
		_, idx, _ := BlockingQuery(context.Background(), f.State, start, time.Minute, query)
		done <- idx
	}()
	select {
	case <-done:
		t.Fatal("returned before anything changed")
	case <-time.After(50 * time.Millisecond):
	}
	apply(t, f, 20, structs.FlavorDeleteRequestType, &structs.FlavorDeleteRequest{IDs: []string{"5"}})
	if idx := waitIndex(t, done); idx != 20 {
		t.Fatalf("woke at %d", idx)
	}

	// A restore replaces the store; a query blocked on the old one wakes.
	var buf bytes.Buffer
	other := testFSM(t)
	populate(t, other.State())
	_ = other.State().UpsertFlavors(30, []*structs.Flavor{{ID: "x", Name: "x", VCPUs: 1, MemoryMB: 1}})
	_ = other.State().WriteSnapshot(&buf)
	go func() {
		_, idx, _ := BlockingQuery(context.Background(), f.State, 20, time.Minute, query)
		done <- idx
	}()
	if err := f.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	if idx := waitIndex(t, done); idx != 30 {
		t.Fatalf("after restore woke at %d", idx)
	}

	// A timeout answers with the current state, not an error.
	_, idx, err := BlockingQuery(context.Background(), f.State, 30, 20*time.Millisecond, query)
	if err != nil || idx != 30 {
		t.Fatalf("timeout answer %d %v", idx, err)
	}
}

func waitIndex(t *testing.T, ch chan uint64) uint64 {
	t.Helper()
	select {
	case idx := <-ch:
		return idx
	case <-time.After(5 * time.Second):
		t.Fatal("blocking query never woke")
		return 0
	}
}

type memSink struct{ bytes.Buffer }

func (m *memSink) ID() string    { return "mem" }
func (m *memSink) Cancel() error { return nil }
func (m *memSink) Close() error  { return nil }
