package server

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/structs"
)

// BenchmarkFootprint boots 10,000 and 100,000 instances (1,000 with
// STRATUS_BENCH_SMALL) on 1,000 simulated hosts through a 1-server
// cluster's real path — Instance.Create, Raft, scheduler, plan applier —
// and reports what each instance costs the server: heap in use and
// live heap (after GC), Raft log bytes (entry payloads, and growth of raft.db) and Raft
// snapshot bytes. Raft keeps its whole log so every entry is counted.
// STRATUS_BENCH_HEAPPROFILE=path writes the live heap at each size to
// path.N.
func BenchmarkFootprint(b *testing.B) {
	sizes := []int{10000, 100000}
	if benchSmall() {
		sizes = []int{1000}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchFootprint(b, n)
			}
		})
	}
}

func benchFootprint(b *testing.B, n int) {
	b.StopTimer()
	dataDir := b.TempDir()
	s := testServer(b, func(c *Config) {
		c.Logger = hclog.NewNullLogger()
		c.HeartbeatTTL = time.Hour
		c.DataDir = dataDir
		c.SnapshotThreshold = 1 << 40
		c.TrailingLogs = 1 << 40
	})
	waitForLeader(b, s)
	seedFlavors(b, s)
	for i := 0; i < 1000; i++ {
		h := testHost(fmt.Sprintf("fp-%05d", i), 1024, 1<<22)
		registerHost(b, s, h)
	}
	dbPath := filepath.Join(dataDir, "raft", "raft.db")
	live0 := heapLive()
	heap0, db0, last0 := heapInUse(), fileSize(b, dbPath), s.raft.LastIndex()

	b.StartTimer()
	evals := createMany(b, s, n)
	waitFor(b, "every evaluation done", 10*time.Minute, func() error {
		for _, id := range evals {
			ev, err := s.fsm.State().EvalByID(nil, id)
			if err != nil {
				return err
			}
			if ev == nil || !ev.Terminal() {
				return fmt.Errorf("evaluation %s pending", id)
			}
		}
		return nil
	})
	b.StopTimer()
	allocs, err := s.fsm.State().Allocations(nil)
	if err != nil || len(allocs) != n {
		b.Fatalf("%d allocations (%v), want %d", len(allocs), err, n)
	}
	allocs = nil
	heap1, live1 := heapInUse(), heapLive()
	if path := os.Getenv("STRATUS_BENCH_HEAPPROFILE"); path != "" {
		writeHeapProfile(b, fmt.Sprintf("%s.%d", path, n))
	}
	db1, last1 := fileSize(b, dbPath), s.raft.LastIndex()
	logBytes := raftLogBytes(b, s, last0+1, last1)
	if err := s.raft.Snapshot().Error(); err != nil {
		b.Fatalf("snapshot: %v", err)
	}
	snapBytes := latestSnapshotSize(b, filepath.Join(dataDir, "raft", "snapshots"))
	per := func(v int64) float64 { return float64(v) / float64(n) }
	b.ReportMetric(per(int64(heap1)-int64(heap0)), "heap-B/inst")
	b.ReportMetric(per(int64(live1)-int64(live0)), "live-B/inst")
	b.ReportMetric(per(logBytes), "raftlog-B/inst")
	b.ReportMetric(per(db1-db0), "raftdb-B/inst")
	b.ReportMetric(per(snapBytes), "snapshot-B/inst")
	b.Logf("%d instances: heap +%d MiB (%.0f B each), %d Raft entries of %.0f B per instance (raft.db +%.0f B each), snapshot %.0f B per instance",
		n, (int64(heap1)-int64(heap0))>>20, per(int64(heap1)-int64(heap0)), last1-last0, per(logBytes), per(db1-db0), per(snapBytes))
}

// createMany creates n m1.tiny instances, 100 a request from 16
// concurrent clients, and returns their evaluations.
func createMany(b *testing.B, s *Server, n int) []string {
	b.Helper()
	var mu sync.Mutex
	var evals []string
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for start := range work {
				var resp structs.InstanceCreateResponse
				err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: fmt.Sprintf("fp-%d", start),
					FlavorID: "m1.tiny", ImageID: "cirros", Count: min(100, n-start)}, &resp)
				if err != nil {
					b.Errorf("create: %v", err)
					return
				}
				mu.Lock()
				evals = append(evals, resp.EvalID)
				mu.Unlock()
			}
		}()
	}
	for start := 0; start < n; start += 100 {
		work <- start
	}
	close(work)
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	return evals
}

// writeHeapProfile writes the live heap to path, for go tool pprof
// -sample_index=inuse_space.
func writeHeapProfile(b *testing.B, path string) {
	b.Helper()
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	if err := pprof.WriteHeapProfile(out); err != nil {
		b.Fatal(err)
	}
}

// heapInUse returns HeapInuse after two collections: the heap's spans
// in use, live objects and the free slots between them.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// heapLive returns HeapAlloc after two collections: the live objects
// alone.
func heapLive() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func fileSize(b *testing.B, path string) int64 {
	b.Helper()
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}

// raftLogBytes sums the payloads of the Raft log entries first..last.
func raftLogBytes(b *testing.B, s *Server, first, last uint64) int64 {
	b.Helper()
	var total int64
	for i := first; i <= last; i++ {
		var entry raft.Log
		if err := s.raftStore.GetLog(i, &entry); err != nil {
			b.Fatalf("read log %d: %v", i, err)
		}
		total += int64(len(entry.Data))
	}
	return total
}

// latestSnapshotSize is the size of the newest snapshot's state file in
// a raft.FileSnapshotStore directory.
func latestSnapshotSize(b *testing.B, dir string) int64 {
	b.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*", "state.bin"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no snapshot in %s: %v", dir, err)
	}
	var newest int64
	for _, f := range files {
		if sz := fileSize(b, f); sz > newest {
			newest = sz
		}
	}
	return newest
}
