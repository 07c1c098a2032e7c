package fsm

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func populateTaskRequests(t *testing.T, s *StateStore) {
	insertRecordAt6(t, s, TableTaskRequests, &structs.TaskRequest{ID: structs.TaskRequestID("p1", "t1"), ProjectID: "p1",
		Key: "t1", Fingerprint: "f", InstanceID: "i1", Op: structs.OpStop, RequestID: "req-1", MigrationID: 6,
		CreatedAt: 5, CreateIndex: 6, ModifyIndex: 6})
}

// keyed gives a task entry an idempotency key of project p1, and the
// request id an attempt of its own (a retry is built again, maybe by
// another leader, with a new one).
func keyed(key, fingerprint, requestID string) func(*structs.InstanceTaskEntry) {
	return func(e *structs.InstanceTaskEntry) {
		e.Idempotency = &structs.TaskIdempotency{ProjectID: "p1", Key: key, Fingerprint: fingerprint}
		e.Action.RequestID = requestID
	}
}

// taskReplayOf returns the record a task's answer replays, or nil.
func taskReplayOf(t *testing.T, resp any) *structs.TaskRequest {
	t.Helper()
	dup, ok := replayError[*TaskAlreadyApplied](t, resp, "task")
	if !ok {
		return nil
	}
	if dup.Request == nil {
		t.Fatalf("a replay by key answered without its record: %v", dup)
	}
	return dup.Request
}

func TestTaskWithTheSameKeyIsStartedOnce(t *testing.T) {
	b := taskFixture(t)
	if rec := taskReplayOf(t, b.task(structs.OpStop, keyed("k-1", "fp-stop", "req-a"))); rec != nil {
		t.Fatalf("the first stop was answered as a replay of %+v", rec)
	}
	first := b.index
	state := b.f.State()
	actions := state.Index(TableInstanceActions)

	// The retry, with another request id, is answered with the first
	// stop: not a conflict with the stop in progress.
	rec := taskReplayOf(t, b.task(structs.OpStop, keyed("k-1", "fp-stop", "req-b")))
	if rec == nil || rec.RequestID != "req-a" || rec.CreateIndex != first || rec.InstanceID != "i1" || rec.Op != structs.OpStop {
		t.Fatalf("the retry answered %+v, want req-a's record at %d", rec, first)
	}
	if got := state.Index(TableInstanceActions); got != actions {
		t.Fatalf("a replay recorded an action (index %d, was %d)", got, actions)
	}
	if a, _ := state.InstanceActionByID(nil, "i1", "req-b"); a != nil {
		t.Fatal("the retry recorded a second instance action")
	}

	// Without the key, the same stop is the conflict it always was.
	resp := b.task(structs.OpStop, func(e *structs.InstanceTaskEntry) { e.Action.RequestID = "req-c" })
	if err, _ := resp.(error); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("an unkeyed second stop answered %v, want a conflict", resp)
	}
	// The same key for a different task is refused, whatever the state
	// of the instance.
	resp = b.task(structs.OpStart, keyed("k-1", "fp-start", "req-d"))
	if err, _ := resp.(error); structs.KindOf(err) != structs.KindConflict || !bytes.Contains([]byte(err.Error()), []byte("already used")) {
		t.Fatalf("a reused key answered %v, want a conflict naming the key", resp)
	}
	// Another project's key of the same text is its own: refused here by
	// the instance's state, not answered with p1's stop.
	resp = b.task(structs.OpStop, keyed("k-1", "fp-stop", "req-e"), func(e *structs.InstanceTaskEntry) { e.Idempotency.ProjectID = "p2" })
	if err, _ := resp.(error); structs.KindOf(err) != structs.KindConflict || errors.As(err, new(*TaskAlreadyApplied)) {
		t.Fatalf("another project's key answered %v", resp)
	}
	// A refused task records no key: the same key is free for it later.
	if recs, _ := state.TaskRequests(nil); len(recs) != 1 {
		t.Fatalf("%d task records, want only k-1", len(recs))
	}
}

func TestTaskRequestsSurviveSnapshotsAndArePurgedWithCreates(t *testing.T) {
	b := taskFixture(t)
	for _, c := range []struct {
		op, key string
		at      int64
	}{{structs.OpLock, "old", 100}, {structs.OpUnlock, "new", 300}} {
		b.mustApply(structs.InstanceTaskType, &structs.InstanceTaskEntry{InstanceID: "i1", Op: c.op, UpdatedAt: c.at,
			Action:      &structs.InstanceAction{RequestID: "req-" + c.key, InstanceID: "i1", Action: c.op, StartTime: 1},
			Idempotency: &structs.TaskIdempotency{ProjectID: "p1", Key: c.key, Fingerprint: "fp"}})
	}

	g := restoredCopy(t, b.f)
	if rec, _ := g.State().TaskRequestByKey(nil, "p1", "old"); rec == nil || rec.RequestID != "req-old" {
		t.Fatalf("a restored state has %+v for key old", rec)
	}
	// The create requests' purge removes old task records too, by the
	// entry's cut-off; an empty purge changes no index.
	purgeKeysTwice(t, g, b.index+10, 200, TableTaskRequests, func() {
		recs, _ := g.State().TaskRequests(nil)
		if len(recs) != 1 || recs[0].Key != "new" {
			t.Fatalf("after the purge: %+v, want only new", recs)
		}
	})
}
