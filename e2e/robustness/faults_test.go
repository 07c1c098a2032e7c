package robustness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// requireOrSkip leaves out a fault the machine cannot inject (not root,
// a tool missing), saying so, but fails under CI=true: a suite that
// quietly drops its faults passes without having tested anything.
func requireOrSkip(t *testing.T, what string, err error) bool {
	t.Helper()
	if err == nil {
		return true
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: %v (CI=true: run the suite as root, with the tools scripts/ci-deps.sh installs)", what, err)
	}
	t.Logf("SKIPPING fault %q: %v", what, err)
	return false
}

// smallDisk is a tmpfs mounted over a server's data dir so the test can
// fill it.
type smallDisk struct {
	dir string
}

func mountSmallDisk(t *testing.T) (*smallDisk, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("a full disk needs root to mount a small tmpfs")
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64m,mode=0700"); err != nil {
		return nil, fmt.Errorf("mount tmpfs: %w", err)
	}
	// Registered after TempDir's cleanup, so it runs first.
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return &smallDisk{dir: dir}, nil
}

func (d *smallDisk) fillPath() string { return filepath.Join(d.dir, "filler") }

// fill writes until the filesystem has no space left.
func (d *smallDisk) fill() error {
	f, err := os.Create(d.fillPath())
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}

func (d *smallDisk) free() error { return os.Remove(d.fillPath()) }

// truncateRaftTail drops the last n entries of the Raft log of the
// stopped server whose data dir is dataDir, as a disk that lost the
// tail of what it had written would. It returns the range dropped.
func truncateRaftTail(dataDir string, n uint64) (from, to uint64, err error) {
	var path string
	err = filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "raft.db" {
			path = p
		}
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	if path == "" {
		return 0, 0, fmt.Errorf("no raft.db under %s", dataDir)
	}
	store, err := raftboltdb.New(raftboltdb.Options{Path: path})
	if err != nil {
		return 0, 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer func() { _ = store.Close() }()
	first, err := store.FirstIndex()
	if err != nil {
		return 0, 0, err
	}
	last, err := store.LastIndex()
	if err != nil {
		return 0, 0, err
	}
	if last <= first {
		return 0, 0, nil // nothing beyond the first entry to lose
	}
	from = first + 1
	if last > n && last-n+1 > from {
		from = last - n + 1
	}
	if err := store.DeleteRange(from, last); err != nil {
		return 0, 0, fmt.Errorf("truncate %s: %w", path, err)
	}
	return from, last, nil
}
