package fsm

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

// BenchmarkFSMApply measures how fast the FSM applies flavor upserts,
// decoding included: the ceiling on committed writes per second.
func BenchmarkFSMApply(b *testing.B) {
	f, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	entries := make([][]byte, 1024)
	for i := range entries {
		req := &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{{
			ID: fmt.Sprintf("f%d", i), Name: fmt.Sprintf("flavor-%d", i), VCPUs: 2, MemoryMB: 2048, RootGB: 20,
			RxTxFactor: 1, IsPublic: true, ExtraSpecs: map[string]string{"hw:cpu_policy": "shared"},
		}}}
		if entries[i], err = structs.EncodeEntry(structs.FlavorUpsertRequestType, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if resp := f.ApplyEntry(uint64(i+1), entries[i%len(entries)]); resp != nil {
			b.Fatal(resp)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "applies/s")
}

// BenchmarkEntryCheck measures decodeBody's walk for nil elements
// (entry_check.go) on a scheduler plan of 100 placements with their
// evaluation, the entry the boot path writes most.
func BenchmarkEntryCheck(b *testing.B) {
	entry := &structs.PlanApplyEntry{Faults: map[string]*structs.Fault{"i-x": {Code: 500, Message: "no valid host"}}}
	ev := &structs.Evaluation{ID: "ev", Status: structs.EvalStatusComplete}
	for i := 0; i < 100; i++ {
		id := fmt.Sprintf("i-%03d", i)
		ev.InstanceIDs = append(ev.InstanceIDs, id)
		entry.Placements = append(entry.Placements, &structs.Allocation{ID: "a-" + id, InstanceID: id, HostID: "h",
			Resources: map[string]int64{structs.ResourceVCPU: 1, structs.ResourceMemoryMB: 512, structs.ResourceDiskGB: 1}})
	}
	entry.Evals = []*structs.Evaluation{ev}
	body, err := structs.Encode(entry)
	if err != nil {
		b.Fatal(err)
	}
	// decode alone is the baseline the check adds to.
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var out structs.PlanApplyEntry
			if err := structs.Decode(body, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode+check", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var out structs.PlanApplyEntry
			if err := decodeBody(structs.PlanApplyType, body, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkApplyPlan measures the FSM's own share of a placement, which
// every server pays: a 100-instance create entry and the plan entry
// that places its instances, decoded and applied, on a store that
// already holds 10,000 placed instances on 1,000 hosts (1,000 under
// STRATUS_BENCH_SMALL). An op is those two entries: 100 placements.
func BenchmarkApplyPlan(b *testing.B) {
	f, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	var index uint64
	apply := func(t structs.MessageType, body any) {
		entry, err := structs.EncodeEntry(t, body)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		index++
		resp := f.ApplyEntry(index, entry)
		b.StopTimer()
		if resp != nil {
			b.Fatal(resp)
		}
	}
	hosts := make([]string, 1000)
	for i := range hosts {
		hosts[i] = uuid.NewString()
		apply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: bootHost(hosts[i])})
	}
	round := func() {
		create := &structs.InstanceCreateEntry{Eval: &structs.Evaluation{ID: uuid.NewString(), Status: structs.EvalStatusPending}}
		plan := &structs.PlanApplyEntry{UpdatedAt: 1}
		for i := 0; i < 100; i++ {
			inst := bootInstance(uuid.NewString())
			create.Instances = append(create.Instances, inst)
			create.Eval.InstanceIDs = append(create.Eval.InstanceIDs, inst.ID)
			plan.Placements = append(plan.Placements, &structs.Allocation{ID: uuid.NewString(), InstanceID: inst.ID,
				HostID: hosts[rand.IntN(len(hosts))], EvalID: create.Eval.ID, DesiredState: structs.AllocDesiredRunning,
				Resources: map[string]int64{structs.ResourceVCPU: 1, structs.ResourceMemoryMB: 512, structs.ResourceDiskGB: 1}})
		}
		ev := *create.Eval
		ev.Status = structs.EvalStatusComplete
		plan.Evals = []*structs.Evaluation{&ev}
		apply(structs.InstanceCreateType, create)
		apply(structs.PlanApplyType, plan)
	}
	stored := 10000
	if os.Getenv("STRATUS_BENCH_SMALL") != "" {
		stored = 1000
	}
	for i := 0; i < stored/100; i++ {
		round()
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		round()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1000/float64(b.N*100), "µs/placement")
}
