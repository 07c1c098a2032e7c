package fsm

import (
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func populateCreateRequests(t *testing.T, s *StateStore) {
	insertRecordAt6(t, s, TableCreateRequests, &structs.CreateRequest{ID: structs.CreateRequestID("p1", "k1"), ProjectID: "p1",
		Key: "k1", Fingerprint: "f", InstanceIDs: []string{"i1"}, EvalID: "e1", CreatedAt: 5, CreateIndex: 6, ModifyIndex: 6})
}

// keyedCreate is a one-instance create of project with an idempotency
// key, as the leader builds it: fresh ids on every attempt.
func keyedCreate(instID, evalID, project, key, fingerprint string, at int64) *structs.InstanceCreateEntry {
	inst := bootInstance(instID)
	inst.ProjectID = project
	return &structs.InstanceCreateEntry{Instances: []*structs.Instance{inst}, CreatedAt: at,
		Eval:        &structs.Evaluation{ID: evalID, InstanceIDs: []string{instID}, Status: structs.EvalStatusPending},
		Idempotency: &structs.CreateIdempotency{Key: key, Fingerprint: fingerprint}}
}

// replayOf returns the record a create's answer replays, or nil.
func replayOf(t *testing.T, resp any) *structs.CreateRequest {
	t.Helper()
	if r, ok := replayError[*structs.CreateReplay](t, resp, "create"); ok {
		return r.Request
	}
	return nil
}

func TestCreateWithTheSameKeyIsAppliedOnce(t *testing.T) {
	f := testFSM(t)
	if resp := apply(t, f, 10, structs.InstanceCreateType, keyedCreate("i-a", "e-a", "p1", "key-1", "fp", 100)); resp != nil {
		t.Fatalf("first create: %v", resp)
	}
	// The retry, built again by (maybe) another leader with new ids.
	rec := replayOf(t, apply(t, f, 11, structs.InstanceCreateType, keyedCreate("i-b", "e-b", "p1", "key-1", "fp", 200)))
	if rec == nil || !reflect.DeepEqual(rec.InstanceIDs, []string{"i-a"}) || rec.EvalID != "e-a" || rec.CreateIndex != 10 {
		t.Fatalf("replay answered %+v, want the first create's i-a/e-a at 10", rec)
	}
	state := f.State()
	if inst, _ := state.InstanceByID(nil, "i-b"); inst != nil {
		t.Fatal("the retry created a second instance")
	}
	if ev, _ := state.EvalByID(nil, "e-b"); ev != nil {
		t.Fatal("the retry created a second evaluation")
	}
	if got := state.Index(TableInstances); got != 10 {
		t.Fatalf("instances index moved to %d by a replay", got)
	}
	// Another project's key of the same text is its own.
	if resp := apply(t, f, 12, structs.InstanceCreateType, keyedCreate("i-c", "e-c", "p2", "key-1", "fp", 300)); resp != nil {
		t.Fatalf("other project's create: %v", resp)
	}
	// The same key for a different request is refused, not answered
	// with another request's instances.
	resp := apply(t, f, 13, structs.InstanceCreateType, keyedCreate("i-d", "e-d", "p1", "key-1", "other", 400))
	if err, _ := resp.(error); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("reused key answered %v, want a conflict", resp)
	}
	// Without a key, creates are never deduplicated.
	for i, id := range []string{"i-e", "i-f"} {
		e := keyedCreate(id, "e-"+id, "p1", "", "", 500)
		e.Idempotency = nil
		if resp := apply(t, f, uint64(14+i), structs.InstanceCreateType, e); resp != nil {
			t.Fatalf("keyless create: %v", resp)
		}
	}
	insts, _ := state.Instances(nil)
	if len(insts) != 4 {
		t.Fatalf("%d instances, want i-a, i-c, i-e, i-f", len(insts))
	}
}

func TestBatchedRetriesOfOneKeyCreateOnce(t *testing.T) {
	f := testFSM(t)
	// Two attempts of the same create in one batch (an agent's retry
	// reached the leader while its first attempt still queued), and one
	// other create between them.
	batch := &structs.InstanceCreateBatchEntry{Entries: []*structs.InstanceCreateEntry{
		keyedCreate("i-a", "e-a", "p1", "k", "fp", 1),
		keyedCreate("i-x", "e-x", "p1", "other", "fp", 1),
		keyedCreate("i-b", "e-b", "p1", "k", "fp", 2),
	}}
	errs, ok := apply(t, f, 7, structs.InstanceCreateBatchType, batch).([]error)
	if !ok || len(errs) != 3 {
		t.Fatalf("batch answered %#v", errs)
	}
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("first creates refused: %v", errs)
	}
	if rec := replayOf(t, errs[2]); rec == nil || rec.InstanceIDs[0] != "i-a" {
		t.Fatalf("the second attempt answered %v, want i-a's replay", errs[2])
	}
	for id, want := range map[string]bool{"i-a": true, "i-x": true, "i-b": false} {
		if inst, _ := f.State().InstanceByID(nil, id); (inst != nil) != want {
			t.Fatalf("instance %s exists: %v, want %v", id, inst != nil, want)
		}
	}
}

func TestCreateRequestsArePurgedByEntryTimeAndSurviveSnapshots(t *testing.T) {
	f := testFSM(t)
	for i, at := range []int64{100, 200, 300} {
		id := string(rune('a' + i))
		if resp := apply(t, f, uint64(10+i), structs.InstanceCreateType, keyedCreate("i-"+id, "e-"+id, "p1", "k-"+id, "fp", at)); resp != nil {
			t.Fatal(resp)
		}
	}
	// Snapshot and restore: the records come back, so a retry after a
	// restart is still answered with the first create.
	g := restoredCopy(t, f)
	if rec := replayOf(t, apply(t, g, 20, structs.InstanceCreateType, keyedCreate("i-z", "e-z", "p1", "k-a", "fp", 400))); rec == nil {
		t.Fatal("a restored state forgot the key")
	}

	// The purge removes what its entry says is old: records created
	// before Before, whatever the time now. A purge with nothing to
	// remove changes nothing; the ignorable flag (how the leader
	// proposes it, for older servers) applies too.
	purgeKeysTwice(t, g, 21, 250, TableCreateRequests, func() {
		recs, _ := g.State().CreateRequests(nil)
		if len(recs) != 1 || recs[0].Key != "k-c" {
			t.Fatalf("after the purge: %+v, want only k-c", recs)
		}
	})
	// An expired key no longer deduplicates: the create is new.
	if resp := apply(t, g, 23, structs.InstanceCreateType, keyedCreate("i-y", "e-y", "p1", "k-a", "fp", 500)); resp != nil {
		t.Fatalf("create after the purge: %v", resp)
	}
}
