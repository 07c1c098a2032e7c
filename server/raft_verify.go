package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/raft"
	"go.etcd.io/bbolt"
	bbolterrors "go.etcd.io/bbolt/errors"
)

// ErrRaftDataCorrupt is wrapped by every start-up verification failure:
// the server refuses to start rather than apply damaged state.
var ErrRaftDataCorrupt = errors.New("raft data is corrupt")

// corruptHint tells the operator what to do about damaged Raft data.
const corruptHint = "refusing to start; move the damaged data dir aside and let this server rejoin " +
	"the cluster (it will receive a snapshot from the leader), or restore it with " +
	"`cloudctl operator snapshot restore`"

// verifyBoltFile checks raft.db's pages before raft-boltdb opens it: the
// file must hold every page its meta page claims and every page must be
// well formed. A truncated file would otherwise fault on first read.
func verifyBoltFile(path string) (err error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stat raft store %s: %w", path, err)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if errors.Is(err, bbolterrors.ErrTimeout) {
		return fmt.Errorf("raft store %s is locked by another process (is another agent running on this data dir?)", path)
	}
	if err != nil {
		return fmt.Errorf("raft store %s: %w: %v; %s", path, ErrRaftDataCorrupt, err, corruptHint)
	}
	defer func() { _ = db.Close() }()
	// A read past the end of a truncated mmap is a fault, not an error:
	// turn it into one.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("raft store %s: %w: reading it faulted (%v); %s", path, ErrRaftDataCorrupt, r, corruptHint)
		}
	}()
	return db.View(func(tx *bbolt.Tx) error {
		if want := tx.Size(); st.Size() < want {
			return fmt.Errorf("raft store %s: %w: the file is truncated (%d bytes, its pages need %d); %s",
				path, ErrRaftDataCorrupt, st.Size(), want, corruptHint)
		}
		var problems []string
		for e := range tx.Check() {
			problems = append(problems, e.Error())
		}
		if len(problems) > 0 {
			if len(problems) > 3 {
				problems = append(problems[:3], fmt.Sprintf("and %d more", len(problems)-3))
			}
			return fmt.Errorf("raft store %s: %w: %s; %s", path, ErrRaftDataCorrupt, strings.Join(problems, "; "), corruptHint)
		}
		return nil
	})
}

// verifyRaftLog reads every entry of the log once, so a damaged or
// missing entry stops the server at start-up instead of panicking Raft
// when it is applied.
func verifyRaftLog(store raft.LogStore, path string) error {
	first, err := store.FirstIndex()
	if err != nil {
		return fmt.Errorf("raft store %s: %w: read first index: %v; %s", path, ErrRaftDataCorrupt, err, corruptHint)
	}
	last, err := store.LastIndex()
	if err != nil {
		return fmt.Errorf("raft store %s: %w: read last index: %v; %s", path, ErrRaftDataCorrupt, err, corruptHint)
	}
	if last == 0 {
		return nil
	}
	var l raft.Log
	for idx := first; idx <= last; idx++ {
		if err := store.GetLog(idx, &l); err != nil {
			if errors.Is(err, raft.ErrLogNotFound) {
				err = fmt.Errorf("raft store %s: entry %d is missing from the log [%d, %d]", path, idx, first, last)
			}
			return fmt.Errorf("%w: %w; %s", ErrRaftDataCorrupt, err, corruptHint)
		}
		if l.Type == raft.LogConfiguration {
			if err := decodeConfigurationSafely(l.Data); err != nil {
				return fmt.Errorf("raft store %s: %w: entry %d: configuration: %v; %s", path, ErrRaftDataCorrupt, idx, err, corruptHint)
			}
		}
	}
	return nil
}

// decodeConfigurationSafely decodes a configuration entry, which Raft
// itself decodes with a panic on failure.
func decodeConfigurationSafely(data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	raft.DecodeConfiguration(data)
	return nil
}

// snapshotMetaFile is the part of hashicorp/raft's meta.json checked here.
type snapshotMetaFile struct {
	ID    string
	Index uint64
	Term  uint64
	Size  int64
	CRC   []byte
}

// verifySnapshots checks every snapshot under dir/snapshots: readable
// metadata, a state file of the recorded size and CRC-64. Raft's file
// store skips a snapshot whose metadata it cannot read, and falls back to
// an older one when the newest fails its CRC, both with only a log line.
func verifySnapshots(dir string) error {
	base := filepath.Join(dir, "snapshots")
	entries, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read snapshot dir %s: %w", base, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		if !e.IsDir() || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		snapDir := filepath.Join(base, e.Name())
		if err := verifySnapshot(snapDir); err != nil {
			return fmt.Errorf("raft snapshot %s: %w: %v; %s", snapDir, ErrRaftDataCorrupt, err, corruptHint)
		}
	}
	return nil
}

func verifySnapshot(snapDir string) error {
	raw, err := os.ReadFile(filepath.Join(snapDir, "meta.json"))
	if err != nil {
		return fmt.Errorf("read meta.json: %w", err)
	}
	var meta snapshotMetaFile
	if err := json.Unmarshal(raw, &meta); err != nil {
		return fmt.Errorf("meta.json is not valid: %w", err)
	}
	if len(meta.CRC) == 0 {
		return errors.New("meta.json records no CRC")
	}
	f, err := os.Open(filepath.Join(snapDir, "state.bin"))
	if err != nil {
		return fmt.Errorf("open state.bin: %w", err)
	}
	defer func() { _ = f.Close() }()
	h := crc64.New(crc64.MakeTable(crc64.ECMA))
	n, err := io.Copy(h, f)
	if err != nil {
		return fmt.Errorf("read state.bin: %w", err)
	}
	if n != meta.Size {
		return fmt.Errorf("state.bin holds %d bytes, meta.json records %d (truncated?)", n, meta.Size)
	}
	if got := h.Sum(nil); !bytes.Equal(got, meta.CRC) {
		return fmt.Errorf("state.bin fails its CRC-64 check (computed %x, recorded %x)", got, meta.CRC)
	}
	return nil
}
