package fsm

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/structs"
)

// benchInstances is the number of instances the snapshot benchmark puts
// in state: STRATUS_BENCH_INSTANCES if set, else 100,000, or 1,000 with
// STRATUS_BENCH_SMALL=1 (make bench-smoke).
func benchInstances() int {
	if v, err := strconv.Atoi(os.Getenv("STRATUS_BENCH_INSTANCES")); err == nil && v > 0 {
		return v
	}
	if os.Getenv("STRATUS_BENCH_SMALL") != "" {
		return 1000
	}
	return 100000
}

// fileSink is a raft.SnapshotSink writing to a plain file.
type fileSink struct{ *os.File }

func (s fileSink) ID() string    { return "bench" }
func (s fileSink) Cancel() error { return s.Close() }

// populateForBench fills f with hosts, and n instances created 100 per
// entry (as a multi-create does) then placed by a plan entry each, the
// way the server's boot path writes them. It returns the last index.
func populateForBench(b *testing.B, f *FSM, n int) uint64 {
	b.Helper()
	var index uint64
	mustApply := func(mt structs.MessageType, body any) {
		index++
		buf, err := structs.EncodeEntry(mt, body)
		if err != nil {
			b.Fatal(err)
		}
		if resp := f.ApplyEntry(index, buf); resp != nil {
			b.Fatalf("%s at %d: %v", mt, index, resp)
		}
	}
	mustApply(structs.FlavorUpsertRequestType, &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()})
	// Limits far above what the benchmark uses, so that every create is
	// checked against the project's usage as a real project's would be.
	mustApply(structs.QuotaUpdateType, &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p-bench",
		Set: map[string]int64{structs.QuotaInstances: 1 << 40, structs.QuotaCores: 1 << 40, structs.QuotaRAM: 1 << 40}})
	const hosts = 1000
	for i := 0; i < hosts; i++ {
		h := bootHost(fmt.Sprintf("h%05d", i))
		h.Inventories[structs.ResourceVCPU].Total = 1024
		h.Inventories[structs.ResourceMemoryMB].Total = 1 << 20
		mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h})
	}
	flavor := structs.DevFlavors()[0]
	res, err := structs.FlavorResources(flavor)
	if err != nil {
		b.Fatal(err)
	}
	for start := 0; start < n; start += 100 {
		batch := min(100, n-start)
		evalID := fmt.Sprintf("e%07d", start)
		create := &structs.InstanceCreateEntry{Flavor: flavor, RequestID: "req-" + evalID, CreatedAt: 1,
			Eval: &structs.Evaluation{ID: evalID, Status: structs.EvalStatusPending}}
		plan := &structs.PlanApplyEntry{UpdatedAt: 2}
		for k := 0; k < batch; k++ {
			id := fmt.Sprintf("i%07d", start+k)
			create.Instances = append(create.Instances, &structs.Instance{
				ID: id, Name: fmt.Sprintf("bench-%d", start+k), ProjectID: "p-bench", UserID: "u-bench",
				ReservationID: "r-" + evalID, FlavorID: flavor.ID, ImageID: "cirros",
				VMState: structs.VMStateBuilding, TaskState: structs.TaskScheduling,
			})
			create.Eval.InstanceIDs = append(create.Eval.InstanceIDs, id)
			plan.Placements = append(plan.Placements, &structs.Allocation{
				ID: "a" + id[1:], InstanceID: id, HostID: fmt.Sprintf("h%05d", (start+k)%hosts), EvalID: evalID,
				Resources: res, DesiredState: structs.AllocDesiredRunning, ClientState: structs.AllocClientPending,
			})
		}
		done := create.Eval.Copy()
		done.Status = structs.EvalStatusComplete
		plan.Evals = []*structs.Evaluation{done}
		mustApply(structs.InstanceCreateType, create)
		mustApply(structs.PlanApplyType, plan)
	}
	return index
}

// heapInUse returns HeapInuse after two collections.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// BenchmarkSnapshotRestore puts 100,000 placed instances (with their
// allocations, create actions and evaluations) in a fresh FSM, then
// measures a Raft snapshot of it (FSM.Snapshot + Persist to a file) and
// a Restore of that file into another fresh FSM. It reports the time of
// each, the snapshot's size, and the heap per instance the state takes
// after the applies and after the restore.
func BenchmarkSnapshotRestore(b *testing.B) {
	n := benchInstances()
	base := heapInUse()
	f, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	populateForBench(b, f, n)
	applyTime := time.Since(start)
	applied := heapInUse()
	if path := os.Getenv("STRATUS_BENCH_HEAPPROFILE"); path != "" {
		writeHeapProfile(b, path)
	}
	if got, _ := f.State().Instances(nil); len(got) != n {
		b.Fatalf("%d instances in state, want %d", len(got), n)
	}
	path := filepath.Join(b.TempDir(), "state.bin")
	var snapTime, restoreTime time.Duration
	var size int64
	var restoredHeap uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		snap, err := f.Snapshot()
		if err != nil {
			b.Fatal(err)
		}
		file, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := snap.Persist(fileSink{file}); err != nil {
			b.Fatal(err)
		}
		snap.Release()
		snapTime += time.Since(start)
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		size = st.Size()

		before := heapInUse()
		start = time.Now()
		fresh, err := New(nil)
		if err != nil {
			b.Fatal(err)
		}
		rc, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := fresh.Restore(rc); err != nil {
			b.Fatal(err)
		}
		restoreTime += time.Since(start)
		b.StopTimer()
		restoredHeap = heapInUse() - before
		if got, _ := fresh.State().Instances(nil); len(got) != n {
			b.Fatalf("%d instances restored, want %d", len(got), n)
		}
		runtime.KeepAlive(fresh)
		b.StartTimer()
	}
	b.StopTimer()
	runtime.KeepAlive(f)
	b.ReportMetric(float64(n), "instances")
	b.ReportMetric(applyTime.Seconds(), "apply-s")
	b.ReportMetric((snapTime / time.Duration(b.N)).Seconds(), "snapshot-s")
	b.ReportMetric((restoreTime / time.Duration(b.N)).Seconds(), "restore-s")
	b.ReportMetric(float64(size)/float64(n), "snapshot-B/inst")
	b.ReportMetric(float64(applied-base)/float64(n), "heap-B/inst")
	b.ReportMetric(float64(restoredHeap)/float64(n), "restored-heap-B/inst")
	b.Logf("%d instances: applied in %v, snapshot %d bytes in %v, restore %v; heap %d B/instance applied, %d B/instance restored",
		n, applyTime, size, snapTime/time.Duration(b.N), restoreTime/time.Duration(b.N), (applied-base)/uint64(n), restoredHeap/uint64(n))
}

// writeHeapProfile writes the live heap to path (go tool pprof
// -sample_index=inuse_space reads it).
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

var _ raft.SnapshotSink = fileSink{}
