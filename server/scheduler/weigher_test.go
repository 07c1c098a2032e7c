package scheduler

import (
	"math"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestResourceWeighers(t *testing.T) {
	req := mustRequest(t, testInstance("i", small()))
	cases := []struct {
		w    Weigher
		host *structs.Host
		want float64
	}{
		{RAMWeigher{}, testHost("h"), 32256},
		{RAMWeigher{}, testHost("h", withUsage(structs.ResourceMemoryMB, 256)), 32000},
		{RAMWeigher{}, testHost("h", withoutInv(structs.ResourceMemoryMB)), 0},
		{CPUWeigher{}, testHost("h"), 64},
		{CPUWeigher{}, testHost("h", withUsage(structs.ResourceVCPU, 70)), -6},
		{DiskWeigher{}, testHost("h", withUsage(structs.ResourceDiskGB, 100)), 400},
		{BuildFailureWeigher{}, testHost("h"), 0},
		{BuildFailureWeigher{}, testHost("h", func(h *structs.Host) { h.BuildFailures = 3 }), -3},
	}
	for _, c := range cases {
		if got := c.w.Weigh(NewHostView(c.host), req); got != c.want {
			t.Errorf("%s: got %v, want %v", c.w.Name(), got, c.want)
		}
	}
	cfg := Config{RAMWeightMultiplier: 1, CPUWeightMultiplier: 2, DiskWeightMultiplier: 3, BuildFailureWeightMultiplier: 4}
	for w, want := range map[Weigher]float64{RAMWeigher{}: 1, CPUWeigher{}: 2, DiskWeigher{}: 3, BuildFailureWeigher{}: 4} {
		if got := w.Multiplier(cfg); got != want {
			t.Errorf("%s multiplier %v, want %v", w.Name(), got, want)
		}
	}
}

func TestWeigherSeesOverlay(t *testing.T) {
	v := NewHostView(testHost("h"))
	req := mustRequest(t, testInstance("i", small()))
	v.consume(req.Resources)
	if got := (RAMWeigher{}).Weigh(v, req); got != 32256-1024 {
		t.Fatalf("free RAM after a placement %v", got)
	}
}

// normalize is Nova's weights.normalize, the reference weigh follows:
// (v-min)/(max-min), all zeros when every value is the same.
func normalize(values []float64) {
	if len(values) == 0 {
		return
	}
	lo, hi := values[0], values[0]
	for _, v := range values[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	for i, v := range values {
		if hi == lo {
			values[i] = 0
		} else {
			values[i] = (v - lo) / (hi - lo)
		}
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct{ in, want []float64 }{
		{nil, nil},
		{[]float64{5}, []float64{0}},
		{[]float64{3, 3, 3}, []float64{0, 0, 0}},
		{[]float64{0, 5, 10}, []float64{0, 0.5, 1}},
		{[]float64{-3, -1, 0}, []float64{0, 2.0 / 3, 1}},
	}
	for _, c := range cases {
		got := append([]float64(nil), c.in...)
		normalize(got)
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-12 {
				t.Fatalf("normalize(%v) = %v, want %v", c.in, got, c.want)
			}
		}
	}
}

// Weights are normalised per weigher, multiplied and summed, as Nova does.
func TestWeighCombines(t *testing.T) {
	views := []HostView{
		*NewHostView(testHost("a", withUsage(structs.ResourceMemoryMB, 16128))),                                         // half RAM free
		*NewHostView(testHost("b", withUsage(structs.ResourceVCPU, 64))),                                                // no VCPU free
		*NewHostView(testHost("c", func(h *structs.Host) { h.BuildFailures = 2 })),                                      // failing builds
		*NewHostView(testHost("d", withUsage(structs.ResourceMemoryMB, 32256), withUsage(structs.ResourceDiskGB, 500))), // full RAM and disk
	}
	cands := []int32{0, 1, 2, 3}
	raw, w := make([]float64, 4), make([]float64, 4)
	cfg := Config{RAMWeightMultiplier: 1, CPUWeightMultiplier: 2, DiskWeightMultiplier: 0, BuildFailureWeightMultiplier: 10}
	req := mustRequest(t, testInstance("i", small()))
	weigh(DefaultWeighers(), cfg, views, cands, req, raw, w)
	want := []float64{0.5 + 2 + 10, 1 + 0 + 10, 1 + 2 + 0, 0 + 2 + 10}
	for i := range want {
		if math.Abs(w[i]-want[i]) > 1e-9 {
			t.Fatalf("weights %v, want %v", w, want)
		}
	}

	// The same as normalising each weigher's values, Nova's way.
	ref := make([]float64, len(cands))
	for _, wg := range DefaultWeighers() {
		vals := make([]float64, len(cands))
		for i, c := range cands {
			vals[i] = wg.Weigh(&views[c], req)
		}
		normalize(vals)
		for i := range ref {
			ref[i] += wg.Multiplier(cfg) * vals[i]
		}
	}
	for i := range ref {
		if math.Abs(w[i]-ref[i]) > 1e-9 {
			t.Fatalf("weights %v, Nova's normalisation gives %v", w, ref)
		}
	}
}
