package server

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// copyDir copies a data dir tree so each corruption starts from the same
// healthy state.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, raw, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

func onlySnapshotDir(t *testing.T, dataDir string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dataDir, "raft", "snapshots", "*"))
	if len(matches) == 0 {
		t.Fatal("no snapshot on disk")
	}
	return matches[len(matches)-1]
}

// TestCorruptRaftDataIsReportedAtStartup writes state through Raft, takes
// a snapshot, stops the server, then damages a copy of its data dir in
// each way below: the restarted server must refuse to start with an error
// naming the damage, never apply it nor panic.
func TestCorruptRaftDataIsReportedAtStartup(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	for i := 0; i < 5; i++ {
		upsertFlavor(t, s, fmt.Sprintf("pre%d", i))
	}
	if err := s.raft.Snapshot().Error(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	// Written after the snapshot, so only the log holds it.
	upsertFlavor(t, s, "zzmarkerzz")
	cfg := *s.config
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	healthy := cfg.DataDir

	restart := func(t *testing.T, dataDir string) (*Server, error) {
		t.Helper()
		c := cfg
		c.DataDir, c.RPCPort, c.GossipPort = dataDir, 0, 0
		srv, err := NewServer(&c)
		if err == nil {
			t.Cleanup(func() { _ = srv.Shutdown() })
		}
		return srv, err
	}

	t.Run("healthy data starts and keeps its state", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, healthy, dir)
		srv, err := restart(t, dir)
		if err != nil {
			t.Fatalf("healthy restart: %v", err)
		}
		waitFor(t, "the log replayed over the snapshot", 60*time.Second, func() error {
			for _, id := range []string{"pre0", "zzmarkerzz"} {
				if f, err := srv.fsm.State().FlavorByID(nil, id); err != nil || f == nil {
					return fmt.Errorf("flavor %s: %v", id, err)
				}
			}
			return nil
		})
	})

	cases := []struct {
		name    string
		corrupt func(t *testing.T, dir string)
		want    string
	}{
		{"flipped byte inside a log entry", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "raft", "raft.db")
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(raw, []byte("zzmarkerzz")) {
				t.Fatal("marker entry not found in raft.db")
			}
			raw = bytes.ReplaceAll(raw, []byte("zzmarkerzz"), []byte("zzmarkeryz"))
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "checksum"},
		{"truncated raft.db", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "raft", "raft.db")
			// Cut the last page bbolt's meta page says is in use.
			db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			var used int64
			_ = db.View(func(tx *bbolt.Tx) error { used = tx.Size(); return nil })
			pageSize := int64(db.Info().PageSize)
			_ = db.Close()
			if err := os.Truncate(path, used-pageSize); err != nil {
				t.Fatal(err)
			}
		}, "truncated"},
		{"flipped byte in a snapshot", func(t *testing.T, dir string) {
			path := filepath.Join(onlySnapshotDir(t, dir), "state.bin")
			raw, err := os.ReadFile(path)
			if err != nil || len(raw) < 2 {
				t.Fatalf("state.bin: %v (%d bytes)", err, len(raw))
			}
			raw[len(raw)/2] ^= 0x40
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "CRC-64"},
		{"truncated snapshot", func(t *testing.T, dir string) {
			path := filepath.Join(onlySnapshotDir(t, dir), "state.bin")
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, "truncated"},
		{"garbled snapshot metadata", func(t *testing.T, dir string) {
			path := filepath.Join(onlySnapshotDir(t, dir), "meta.json")
			if err := os.WriteFile(path, []byte(`{"ID": "x", "Ind`), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "meta.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyDir(t, healthy, dir)
			tc.corrupt(t, dir)
			_, err := restart(t, dir)
			if err == nil {
				t.Fatal("the server started on corrupt raft data")
			}
			if !errors.Is(err, ErrRaftDataCorrupt) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "refusing to start") {
				t.Fatalf("unclear error: %v", err)
			}
			t.Logf("reported: %v", err)
		})
	}
}

// TestChecksumStoreReadsLegacyEntriesAndMovesItsFormatFlag opens a store
// written without checksums, reads its entries unchanged, appends
// checksummed ones, and overwrites a conflicting suffix below the format
// flag as a follower would.
func TestChecksumStoreReadsLegacyEntriesAndMovesItsFormatFlag(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "raft.db")
	bolt, err := raftboltdb.New(raftboltdb.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bolt.Close() })
	entry := func(idx, term uint64, data string) *raft.Log {
		return &raft.Log{Index: idx, Term: term, Type: raft.LogCommand, Data: []byte(data)}
	}
	if err := bolt.StoreLogs([]*raft.Log{entry(1, 1, "a"), entry(2, 1, "b"), entry(3, 1, "c")}); err != nil {
		t.Fatal(err)
	}
	cs, err := newChecksumStore(bolt, path)
	if err != nil {
		t.Fatal(err)
	}
	if cs.from != 4 {
		t.Fatalf("format flag %d, want 4", cs.from)
	}
	in := entry(4, 2, "d")
	if err := cs.StoreLogs([]*raft.Log{in}); err != nil {
		t.Fatal(err)
	}
	if string(in.Data) != "d" {
		t.Fatalf("StoreLogs changed the caller's entry: %q", in.Data)
	}
	check := func(idx uint64, want string) {
		t.Helper()
		var l raft.Log
		if err := cs.GetLog(idx, &l); err != nil || string(l.Data) != want {
			t.Fatalf("entry %d: %q, %v; want %q", idx, l.Data, err, want)
		}
	}
	check(2, "b")
	check(4, "d")

	// A conflicting suffix from index 2: Raft deletes, then stores.
	if err := cs.DeleteRange(2, 4); err != nil {
		t.Fatal(err)
	}
	if err := cs.StoreLogs([]*raft.Log{entry(2, 3, "B"), entry(3, 3, "C")}); err != nil {
		t.Fatal(err)
	}
	check(1, "a")
	check(2, "B")
	check(3, "C")
	if err := verifyRaftLog(cs, path); err != nil {
		t.Fatal(err)
	}

	// Reopening keeps the moved flag.
	again, err := newChecksumStore(bolt, path)
	if err != nil || again.from != 2 {
		t.Fatalf("reopened flag %d, %v; want 2", again.from, err)
	}
	// A legacy-format write above the flag is reported, not returned.
	if err := bolt.StoreLogs([]*raft.Log{entry(4, 3, "raw")}); err != nil {
		t.Fatal(err)
	}
	var l raft.Log
	if err := again.GetLog(4, &l); !errors.Is(err, ErrLogCorrupt) {
		t.Fatalf("unchecked entry above the flag: %v", err)
	}
}
