package scheduler

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// With an empty overlay a view answers exactly as the host does.
func TestHostViewMatchesHost(t *testing.T) {
	rng := newRNG(7)
	classes := []string{structs.ResourceVCPU, structs.ResourceMemoryMB, structs.ResourceDiskGB, "CUSTOM_X"}
	for range 2000 {
		h := &structs.Host{ID: "h", Inventories: map[string]*structs.Inventory{}, Usage: map[string]int64{}}
		for _, c := range classes {
			if rng.IntN(5) == 0 {
				continue
			}
			h.Inventories[c] = &structs.Inventory{
				Total: rng.Int64N(100), Reserved: rng.Int64N(10), MinUnit: rng.Int64N(3),
				MaxUnit: rng.Int64N(60), StepSize: rng.Int64N(4), AllocationRatio: []float64{1, 1.5, 4}[rng.IntN(3)],
			}
			h.Usage[c] = rng.Int64N(80)
		}
		v := NewHostView(h)
		for _, c := range classes {
			if v.Free(c) != h.Free(c) {
				t.Fatalf("%s: free %d, host says %d", c, v.Free(c), h.Free(c))
			}
			amount := rng.Int64N(70)
			if v.Fits(c, amount) != h.Fits(c, amount) {
				t.Fatalf("%s %d: fits %v, host says %v (%+v used %d)", c, amount, v.Fits(c, amount), h.Fits(c, amount), h.Inventories[c], h.Usage[c])
			}
		}
	}
}

func TestHostViewOverlay(t *testing.T) {
	h := testHost("h", withInv("CUSTOM_FPGA", 2), withUsage(structs.ResourceVCPU, 10))
	v := NewHostView(h)
	v.consume(map[string]int64{structs.ResourceVCPU: 4, "CUSTOM_FPGA": 1})
	v.consume(map[string]int64{structs.ResourceVCPU: 4, "CUSTOM_FPGA": 1})
	if got := v.Free(structs.ResourceVCPU); got != 64-18 {
		t.Fatalf("free VCPU %d", got)
	}
	if v.Used(structs.ResourceVCPU) != 18 || v.Planned(structs.ResourceVCPU) != 8 {
		t.Fatalf("used %d planned %d", v.Used(structs.ResourceVCPU), v.Planned(structs.ResourceVCPU))
	}
	if v.Fits("CUSTOM_FPGA", 1) || v.Free("CUSTOM_FPGA") != 0 || v.Free("CUSTOM_NONE") != -1 {
		t.Fatal("custom overlay not counted")
	}
	if h.Usage[structs.ResourceVCPU] != 10 || len(h.Usage) != 1 {
		t.Fatalf("host usage modified: %v", h.Usage)
	}
}
