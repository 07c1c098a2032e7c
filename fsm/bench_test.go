package fsm

import (
	"fmt"
	"testing"
	"time"

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
