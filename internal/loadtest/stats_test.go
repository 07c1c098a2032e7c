package loadtest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStatsSummary(t *testing.T) {
	s := NewStats()
	for i := 1; i <= 100; i++ {
		s.record(KindListServers, time.Duration(i)*time.Millisecond, nil)
	}
	s.record(KindBoot, time.Second, &apiError{Status: 429, Body: "slow down"})
	s.record(KindBoot, 2*time.Second, errors.New("reset"))
	kinds, limited := s.Summary()
	if limited != 1 || len(kinds) != 2 {
		t.Fatalf("limited %d, kinds %+v", limited, kinds)
	}
	l := kinds[0]
	if l.Kind != KindListServers || l.Calls != 100 || l.Errors != 0 || l.P50 != 51*time.Millisecond || l.P99 != 100*time.Millisecond {
		t.Fatalf("list: %+v", l)
	}
	if b := kinds[1]; b.Errors != 2 || len(b.Examples) != 2 || b.Max != 2*time.Second {
		t.Fatalf("boot: %+v", b)
	}
}

func TestDiskUsage(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, n int) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("server/raft/raft.db", 1000)
	write("server/raft/snapshots/2-10-1/state.bin", 300)
	write("server/raft/snapshots/2-10-1/meta.json", 20)
	write("server/other.db", 5000)
	got := (&Proc{DataDir: dir}).DiskUsage()
	if got.RaftDB != 1000 || got.Snapshots != 320 {
		t.Fatalf("%+v", got)
	}
}
