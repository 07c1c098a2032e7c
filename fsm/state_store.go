package fsm

import (
	"context"
	"fmt"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// StateStore is the in-memory, indexed state every server holds. Reads
// see a consistent snapshot per transaction; writes happen only from the
// FSM (and from tests).
type StateStore struct {
	db *memdb.MemDB
	// abandonCh is closed when a restore replaces this store, so that
	// blocking queries waiting on it wake and re-read the new one.
	abandonCh chan struct{}
	// evalHook hears of the evaluations committed entries created
	// (eval_hook.go); nil for none.
	evalHook EvalHook
}

// NewStateStore returns an empty store with every registered table.
func NewStateStore() (*StateStore, error) {
	schema, err := dbSchema()
	if err != nil {
		return nil, err
	}
	db, err := memdb.NewMemDB(schema)
	if err != nil {
		return nil, fmt.Errorf("create state store: %w", err)
	}
	return &StateStore{db: db, abandonCh: make(chan struct{})}, nil
}

// Snapshot returns a read-only, point-in-time copy of the store, for a
// reader that must see several tables at one index (a host's usage and
// its allocations, say): separate reads of the live store can straddle
// an Apply. Writing to the copy is an error of the caller's.
func (s *StateStore) Snapshot() *StateStore {
	return &StateStore{db: s.db.Snapshot(), abandonCh: make(chan struct{})}
}

// AbandonCh is closed when the store has been replaced by a restore.
func (s *StateStore) AbandonCh() <-chan struct{} { return s.abandonCh }

func (s *StateStore) abandon() { close(s.abandonCh) }

// ReadTxn opens a read transaction.
func (s *StateStore) ReadTxn() *memdb.Txn { return s.db.Txn(false) }

// writeTxn opens a write transaction; only the FSM and tests call it.
func (s *StateStore) writeTxn() *memdb.Txn { return s.db.Txn(true) }

// Index returns the last Raft index that changed table, or 0.
func (s *StateStore) Index(table string) uint64 {
	raw, err := s.ReadTxn().First(tableIndex, "id", table)
	if err != nil || raw == nil {
		return 0
	}
	return raw.(*structs.IndexEntry).Value
}

// MaxIndex is the largest index of the given tables, read in one
// transaction.
func (s *StateStore) MaxIndex(tables ...string) uint64 {
	txn := s.ReadTxn()
	var idx uint64
	for _, t := range tables {
		if raw, err := txn.First(tableIndex, "id", t); err == nil && raw != nil {
			idx = max(idx, raw.(*structs.IndexEntry).Value)
		}
	}
	return idx
}

// LatestIndex is the largest index of any table.
func (s *StateStore) LatestIndex() uint64 {
	it, err := s.ReadTxn().Get(tableIndex, "id")
	if err != nil {
		return 0
	}
	var max uint64
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if v := raw.(*structs.IndexEntry).Value; v > max {
			max = v
		}
	}
	return max
}

// Indexes returns every table's index, for snapshots and tests.
func (s *StateStore) Indexes() []*structs.IndexEntry {
	it, err := s.ReadTxn().Get(tableIndex, "id")
	if err != nil {
		return nil
	}
	var out []*structs.IndexEntry
	for raw := it.Next(); raw != nil; raw = it.Next() {
		e := *raw.(*structs.IndexEntry)
		out = append(out, &e)
	}
	return out
}

// setIndex records that table changed at index, never moving it back.
func setIndex(txn *memdb.Txn, table string, index uint64) error {
	raw, err := txn.First(tableIndex, "id", table)
	if err != nil {
		return fmt.Errorf("read index of %s: %w", table, err)
	}
	if raw != nil && raw.(*structs.IndexEntry).Value >= index {
		return nil
	}
	if err := txn.Insert(tableIndex, &structs.IndexEntry{Key: table, Value: index}); err != nil {
		return fmt.Errorf("set index of %s: %w", table, err)
	}
	return nil
}

// QueryFn reads from state, registering what it read in ws, and returns
// the answer and the index it reflects.
type QueryFn func(ws memdb.WatchSet, state *StateStore) (resp any, index uint64, err error)

// BlockingQuery runs fn against the current store and, while the answer's
// index is not past minIndex, waits for anything fn read to change, the
// store to be replaced (restore), ctx to end, or maxWait to pass; then it
// runs fn again. It always returns the last answer rather than an error on
// timeout. getState is called on every round because a restore swaps the
// store.
func BlockingQuery(ctx context.Context, getState func() *StateStore, minIndex uint64, maxWait time.Duration, fn QueryFn) (any, uint64, error) {
	if minIndex == 0 {
		state := getState()
		return fn(memdb.NewWatchSet(), state)
	}
	if maxWait <= 0 {
		maxWait = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, maxWait)
	defer cancel()
	for {
		state := getState()
		ws := memdb.NewWatchSet()
		ws.Add(state.AbandonCh())
		resp, index, err := fn(ws, state)
		if err != nil || index > minIndex {
			return resp, index, err
		}
		if err := ws.WatchCtx(ctx); err != nil {
			// Timed out or cancelled: answer with what we have.
			return resp, index, nil
		}
	}
}

// IndexWatch returns a channel closed on the next change of any table's
// index, for waiting until the state reaches an index.
func (s *StateStore) IndexWatch() <-chan struct{} {
	it, err := s.ReadTxn().Get(tableIndex, "id")
	if err != nil {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	return it.WatchCh()
}
