package scheduler

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// benchHosts builds n hosts with realistic inventories (64 VCPU at ratio
// 4, 256 GiB of RAM with 512 MB reserved, 2 TB of disk), a few traits,
// half of them partly used, one in a hundred down and one in a hundred
// disabled; the first full hosts have no memory left.
func benchHosts(n, full int) []*structs.Host {
	rng := newRNG(42)
	hosts := make([]*structs.Host, n)
	for i := range hosts {
		h := &structs.Host{
			ID: newUUID(rng), Name: fmt.Sprintf("compute-%05d", i), Region: "r1", AZ: fmt.Sprintf("az%d", i%3+1),
			Status: structs.HostStatusUp, Enabled: true, Driver: "libvirt",
			HypervisorType: "QEMU", HypervisorVersion: "8.2.0", Arch: "x86_64",
			Inventories: map[string]*structs.Inventory{
				structs.ResourceVCPU:     {Total: 64, MinUnit: 1, MaxUnit: 64, StepSize: 1, AllocationRatio: 4},
				structs.ResourceMemoryMB: {Total: 262144, Reserved: 512, MinUnit: 1, MaxUnit: 262144, StepSize: 1, AllocationRatio: 1},
				structs.ResourceDiskGB:   {Total: 2000, MinUnit: 1, MaxUnit: 2000, StepSize: 1, AllocationRatio: 1},
			},
			Traits:     []string{"COMPUTE_NET_VIRTIO", "COMPUTE_VOLUME_MULTI_ATTACH", "HW_CPU_X86_AVX2", "HW_CPU_X86_SSE42"},
			Attributes: map[string]string{"numa_nodes": "2"},
			Usage:      map[string]int64{},
		}
		if i%2 == 1 {
			h.Usage[structs.ResourceVCPU] = rng.Int64N(200)
			h.Usage[structs.ResourceMemoryMB] = rng.Int64N(200000)
			h.Usage[structs.ResourceDiskGB] = rng.Int64N(1500)
		}
		if i%4 == 0 {
			h.Traits = append(h.Traits, "STORAGE_DISK_SSD")
		}
		switch i % 100 {
		case 42:
			h.Status = structs.HostStatusDown
		case 43:
			h.Enabled = false
		}
		if i < full {
			h.Usage[structs.ResourceMemoryMB] = 262144 - 512
		}
		hosts[i] = h
	}
	return hosts
}

// BenchmarkScheduleOne measures one placement decision (one instance,
// one Schedule call) and reports its p50 and p99 latency.
func BenchmarkScheduleOne(b *testing.B) {
	cases := []struct {
		name        string
		hosts, full int
	}{
		{"hosts=1000", 1000, 0},
		{"hosts=10000", 10000, 0},
		{"hosts=50000", 50000, 0},
		{"hosts=10000/full=9990", 10000, 9990},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			state := sliceState(benchHosts(c.hosts, c.full))
			inst := testInstance("bench", testFlavor(4, 8192, 80, "trait:HW_CPU_X86_AVX2=required", "hw:cpu_policy=shared"))
			insts := []*structs.Instance{inst}
			eval := &structs.Evaluation{ID: "eval", InstanceIDs: []string{inst.ID}}
			rng := newRNG(1)
			durations := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				plan, err := Schedule(state, eval, insts, DefaultConfig(), rng)
				durations = append(durations, time.Since(start))
				if err != nil || len(plan.Placements) != 1 {
					b.Fatalf("plan %+v, err %v", plan, err)
				}
			}
			b.StopTimer()
			slices.Sort(durations)
			pct := func(p int) float64 {
				i := min(len(durations)-1, len(durations)*p/100)
				return float64(durations[i].Nanoseconds()) / 1e6
			}
			b.ReportMetric(pct(50), "p50-ms")
			b.ReportMetric(pct(99), "p99-ms")
		})
	}
}

// BenchmarkScheduleEval measures a multi-create's evaluation: 100
// instances of one flavor placed in one Schedule call among 1,000
// hosts, as BenchmarkClusterPlacement's workers do, with and without
// reusing the candidates between equivalent requests (reuse.go). It
// reports the time per placement.
func BenchmarkScheduleEval(b *testing.B) {
	state := sliceState(benchHosts(1000, 0))
	insts := make([]*structs.Instance, 100)
	eval := &structs.Evaluation{ID: "eval"}
	for i := range insts {
		insts[i] = testInstance(fmt.Sprintf("i%03d", i), testFlavor(1, 512, 1))
		eval.InstanceIDs = append(eval.InstanceIDs, insts[i].ID)
	}
	for _, reuse := range []bool{false, true} {
		b.Run(fmt.Sprintf("reuse=%v", reuse), func(b *testing.B) {
			rng := newRNG(1)
			b.ReportAllocs()
			start := time.Now()
			for range b.N {
				plan, err := scheduleReusing(state, eval, insts, DefaultConfig(), rng, reuse)
				if err != nil || len(plan.Placements) != len(insts) {
					b.Fatalf("plan %+v, err %v", plan, err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N*len(insts)), "µs/placement")
		})
	}
}
