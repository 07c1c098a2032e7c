package fsm

import (
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/structs"
)

// applyFn applies one decoded entry at index. version is the entry's
// format version, so a handler can read what older servers wrote. The
// return value is handed back to the proposer by raft.ApplyFuture.
type applyFn func(state *StateStore, index uint64, version uint8, body []byte) any

var applyHandlers = map[structs.MessageType]applyFn{}

// registerApply is called from each resource file's init, Consul-style,
// so the FSM has no central switch to grow.
func registerApply(t structs.MessageType, fn applyFn) {
	if _, dup := applyHandlers[t]; dup {
		panic(fmt.Sprintf("fsm: two handlers for %s", t))
	}
	applyHandlers[t] = fn
}

// FSM is the Raft finite-state machine.
type FSM struct {
	logger hclog.Logger

	// mu guards state, which Restore swaps out.
	mu    sync.RWMutex
	state *StateStore
	// evalHook is passed on to every state store (eval_hook.go).
	evalHook EvalHook
}

// New returns an FSM over an empty state store.
func New(logger hclog.Logger) (*FSM, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	state, err := NewStateStore()
	if err != nil {
		return nil, err
	}
	return &FSM{logger: logger.Named("fsm"), state: state}, nil
}

// State returns the current state store. Hold on to it only for one
// read: a restore replaces it.
func (f *FSM) State() *StateStore {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.state
}

// Apply applies one committed log entry.
func (f *FSM) Apply(log *raft.Log) any {
	if log.Type != raft.LogCommand {
		return nil
	}
	return f.ApplyEntry(log.Index, log.Data)
}

// ApplyEntry applies encoded entry data at index; Apply and benchmarks
// share it.
func (f *FSM) ApplyEntry(index uint64, data []byte) any {
	msgType, version, body, err := structs.DecodeEntry(data)
	if err != nil {
		return fmt.Errorf("apply entry %d: %w", index, err)
	}
	ignorable := msgType&structs.IgnoreUnknownTypeFlag != 0
	handler, ok := applyHandlers[msgType&^structs.IgnoreUnknownTypeFlag]
	if !ok {
		if ignorable {
			f.logger.Warn("skipping unknown ignorable message type", "type", uint8(msgType), "index", index)
			return nil
		}
		// An unknown mandatory entry means this server is too old for
		// the cluster; applying past it would diverge, so stop loudly.
		panic(fmt.Sprintf("fsm: unknown message type %d at index %d; upgrade this server", uint8(msgType), index))
	}
	return handler(f.State(), index, version, body)
}

// Snapshot captures the current state for Raft. It must be fast: the
// expensive part happens in Persist, concurrently with new Applies.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	return &fsmSnapshot{state: f.State(), txn: f.State().ReadTxn()}, nil
}

// Restore replaces the state with a snapshot stream and wakes every
// blocking query that was watching the old state.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	state, err := readSnapshot(rc, f.logger)
	if err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	f.mu.Lock()
	old := f.state
	state.evalHook = f.evalHook
	f.state = state
	f.mu.Unlock()
	old.abandon()
	return nil
}

// decodeBody decodes an entry body, wrapping errors with the type name.
func decodeBody(t structs.MessageType, body []byte, out any) error {
	if err := structs.Decode(body, out); err != nil {
		return fmt.Errorf("decode %s entry: %w", t, err)
	}
	if err := checkNoNilElements(reflect.ValueOf(out), "entry"); err != nil {
		return structs.Errorf(structs.KindInvalid, "malformed %s entry: %v", t, err)
	}
	return nil
}
