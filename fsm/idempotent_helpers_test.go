package fsm

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// The scaffolding the tests of idempotency records (creates' and tasks')
// share.

// insertRecordAt6 inserts one record into table, committed at index 6,
// for the snapshot tests' populate.
func insertRecordAt6(t *testing.T, s *StateStore, table string, rec any) {
	t.Helper()
	txn := s.writeTxn()
	defer txn.Abort()
	if err := txn.Insert(table, rec); err != nil {
		t.Fatal(err)
	}
	if err := commitAt(txn, 6, table); err != nil {
		t.Fatal(err)
	}
}

// restoredCopy snapshots f and restores the snapshot into a new FSM.
func restoredCopy(t *testing.T, f *FSM) *FSM {
	t.Helper()
	g := testFSM(t)
	if err := g.Restore(io.NopCloser(bytes.NewReader(snapshotBytes(t, f)))); err != nil {
		t.Fatal(err)
	}
	return g
}

// replayError returns the replay error E an entry's answer is, and false
// when the entry was applied; any other error fails the test (what names
// the entry).
func replayError[E error](t *testing.T, resp any, what string) (E, bool) {
	t.Helper()
	err, _ := resp.(error)
	var replay E
	if errors.As(err, &replay) {
		return replay, true
	}
	if err != nil {
		t.Fatalf("%s refused: %v", what, err)
	}
	return replay, false
}

// purgeKeysTwice applies a purge of idempotency records older than
// before at index, checks that it moved table's index there, and runs
// check on what it left; then it applies the same purge again, as the
// leader proposes it (ignorable by older servers), and checks that a
// purge with nothing to remove changes no index.
func purgeKeysTwice(t *testing.T, f *FSM, index uint64, before int64, table string, check func()) {
	t.Helper()
	if resp := apply(t, f, index, structs.CreateRequestPurgeType, &structs.CreateRequestPurgeEntry{Before: before}); resp != nil {
		t.Fatal(resp)
	}
	if got := f.State().Index(table); got != index {
		t.Fatalf("purge index %d of %s, want %d", got, table, index)
	}
	check()
	again := &structs.CreateRequestPurgeEntry{Before: before}
	if resp := apply(t, f, index+1, structs.CreateRequestPurgeType|structs.IgnoreUnknownTypeFlag, again); resp != nil {
		t.Fatal(resp)
	}
	if got := f.State().Index(table); got != index {
		t.Fatalf("an empty purge moved the index of %s to %d", table, got)
	}
}
