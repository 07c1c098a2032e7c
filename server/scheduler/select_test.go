package scheduler

import (
	"fmt"
	"slices"
	"testing"
)

// best(n) agrees with a full sort for every n, with many ties.
func TestRankingBest(t *testing.T) {
	rng := newRNG(3)
	for round := range 200 {
		n := 1 + rng.IntN(40)
		views := make([]HostView, n)
		cands := make([]int32, n)
		weights := make([]float64, n)
		for i := range views {
			views[i].Host = testHost(fmt.Sprintf("h%03d", rng.IntN(1000)*1000+i))
			cands[i] = int32(i)
			weights[i] = float64(rng.IntN(4))
		}
		r := ranking{views: views, cands: cands, weights: weights}
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		slices.SortFunc(all, func(a, b int) int {
			if r.better(a, b) {
				return -1
			}
			return 1
		})
		k := 1 + rng.IntN(n)
		got := r.best(nil, k)
		if !slices.Equal(got, all[:k]) {
			t.Fatalf("round %d: best(%d) = %v, want %v", round, k, got, all[:k])
		}
	}
}

func TestRankingTieBreaksByHostID(t *testing.T) {
	views := []HostView{{Host: testHost("c")}, {Host: testHost("a")}, {Host: testHost("b")}}
	r := ranking{views: views, cands: []int32{0, 1, 2}, weights: []float64{1, 1, 1}}
	if got := r.best(nil, 1); got[0] != 1 {
		t.Fatalf("tie went to %s", views[got[0]].Host.ID)
	}
	if got := r.best(nil, 3); !slices.Equal(got, []int{1, 2, 0}) {
		t.Fatalf("order %v", got)
	}
}
