package fsm

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/structs"
)

// A snapshot stream is a header record followed by records, each framed
// as [record type][record version][msgpack value].

// snapshotTable describes how one table is written to and read from a
// snapshot. Each resource file registers its own.
type snapshotTable struct {
	recordType structs.SnapshotType
	table      string
	// newRecord returns an empty value to decode one record into.
	newRecord func() any
	// version is the record format this build writes.
	version uint8
	// upgrade, if set, turns a decoded record of an older version into
	// the current shape before it is inserted.
	upgrade func(version uint8, rec any) (any, error)
	// canonical, if set, makes a decoded record share what it can with
	// the rest of the state (interned strings, shared maps) before it is
	// inserted; it changes no value.
	canonical func(rec any)
}

var snapshotTables []snapshotTable

// restoreHooks rebuild derived state (tables no snapshot carries) in
// the restore's transaction, after every record is in.
var restoreHooks []func(txn *memdb.Txn) error

func registerRestoreHook(h func(txn *memdb.Txn) error) {
	restoreHooks = append(restoreHooks, h)
}

func registerSnapshot(t snapshotTable) {
	if t.version == 0 {
		t.version = 1
	}
	snapshotTables = append(snapshotTables, t)
}

func init() {
	registerSnapshot(snapshotTable{
		recordType: structs.IndexSnapshot,
		table:      tableIndex,
		newRecord:  func() any { return new(structs.IndexEntry) },
	})
}

type fsmSnapshot struct {
	state *StateStore
	txn   *memdb.Txn
}

// Persist streams every table to sink.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := writeSnapshot(sink, s.txn, s.state.LatestIndex()); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

// Release is a no-op: the read transaction holds nothing to free.
func (s *fsmSnapshot) Release() {}

// WriteSnapshot writes the whole state to w; tests and the operator
// snapshot endpoint use it through the FSM.
func (s *StateStore) WriteSnapshot(w io.Writer) error {
	return writeSnapshot(w, s.ReadTxn(), s.LatestIndex())
}

func writeSnapshot(w io.Writer, txn *memdb.Txn, lastIndex uint64) error {
	bw := bufio.NewWriter(w)
	enc := codec.NewEncoder(bw, structs.MsgpackHandle)
	write := func(t structs.SnapshotType, version uint8, v any) error {
		if _, err := bw.Write([]byte{byte(t), version}); err != nil {
			return err
		}
		return enc.Encode(v)
	}
	hdr := &structs.SnapshotHeaderRecord{Magic: structs.SnapshotMagic, Version: structs.SnapshotVersion, LastIndex: lastIndex}
	if err := write(structs.SnapshotHeader, structs.SnapshotVersion, hdr); err != nil {
		return fmt.Errorf("write snapshot header: %w", err)
	}
	for _, t := range snapshotTables {
		it, err := txn.Get(t.table, "id")
		if err != nil {
			return fmt.Errorf("snapshot table %s: %w", t.table, err)
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			if err := write(t.recordType, t.version, raw); err != nil {
				return fmt.Errorf("snapshot table %s: %w", t.table, err)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("flush snapshot: %w", err)
	}
	return nil
}

// ReadSnapshot builds a new state store from a snapshot stream, for tools
// that inspect a saved snapshot.
func ReadSnapshot(r io.Reader) (*StateStore, error) {
	return readSnapshot(r, hclog.NewNullLogger())
}

func readSnapshot(r io.Reader, logger hclog.Logger) (*StateStore, error) {
	state, err := NewStateStore()
	if err != nil {
		return nil, err
	}
	byType := make(map[structs.SnapshotType]snapshotTable, len(snapshotTables))
	for _, t := range snapshotTables {
		byType[t.recordType] = t
	}
	br := bufio.NewReader(r)
	dec := codec.NewDecoder(br, structs.MsgpackHandle)
	txn := state.writeTxn()
	defer txn.Abort()

	var frame [2]byte
	first := true
	for {
		if _, err := io.ReadFull(br, frame[:]); err != nil {
			if errors.Is(err, io.EOF) && !first {
				break
			}
			return nil, fmt.Errorf("read snapshot record header: %w", err)
		}
		recType, version := structs.SnapshotType(frame[0]), frame[1]
		if first {
			if recType != structs.SnapshotHeader {
				return nil, fmt.Errorf("not a Stratus snapshot (first record type %d)", recType)
			}
			var hdr structs.SnapshotHeaderRecord
			if err := dec.Decode(&hdr); err != nil {
				return nil, fmt.Errorf("decode snapshot header: %w", err)
			}
			if hdr.Magic != structs.SnapshotMagic {
				return nil, fmt.Errorf("not a Stratus snapshot (magic %q)", hdr.Magic)
			}
			if hdr.Version > structs.SnapshotVersion {
				return nil, fmt.Errorf("snapshot version %d is newer than this server's %d", hdr.Version, structs.SnapshotVersion)
			}
			first = false
			continue
		}
		t, ok := byType[recType&^structs.IgnoreUnknownSnapshotFlag]
		if !ok {
			if recType&structs.IgnoreUnknownSnapshotFlag == 0 {
				return nil, fmt.Errorf("unknown snapshot record type %d; upgrade this server", recType)
			}
			var skip any
			if err := dec.Decode(&skip); err != nil {
				return nil, fmt.Errorf("skip snapshot record type %d: %w", recType, err)
			}
			logger.Warn("skipped unknown ignorable snapshot record", "type", uint8(recType))
			continue
		}
		rec := t.newRecord()
		if err := dec.Decode(rec); err != nil {
			return nil, fmt.Errorf("decode %s record: %w", t.table, err)
		}
		if t.upgrade != nil && version < t.version {
			if rec, err = t.upgrade(version, rec); err != nil {
				return nil, fmt.Errorf("upgrade %s record from version %d: %w", t.table, version, err)
			}
		}
		if t.canonical != nil {
			t.canonical(rec)
		}
		if err := txn.Insert(t.table, rec); err != nil {
			return nil, fmt.Errorf("restore %s record: %w", t.table, err)
		}
	}
	for _, h := range restoreHooks {
		if err := h(txn); err != nil {
			return nil, fmt.Errorf("rebuild derived state: %w", err)
		}
	}
	txn.Commit()
	return state, nil
}
