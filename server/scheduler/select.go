package scheduler

import "slices"

// ranking orders the candidates of one placement: higher weight first;
// among equal weights, with a pivot, the first host at or after the
// pivot's position in the views (which come sorted by host ID), wrapping
// around; without one, the lower host ID. Either way a seed reproduces
// every decision.
//
// The pivot is drawn per Schedule call from its random source. Without
// it, every worker scheduling from the same snapshot sent its instance
// to the same one of many equally good hosts (on an empty cluster,
// always the lowest ID): the applier could take only what fitted there
// and refused the rest, which re-planned, and under load most
// placements took several plans (issue #31). Nova's ties fall in the
// order Placement returns its candidates, which is no better defined.
type ranking struct {
	views   []HostView
	cands   []int32
	weights []float64
	// pivot is the view position ties start from; -1 (or 0) is none.
	pivot int32
}

// better reports whether candidate position i ranks above position j.
func (r *ranking) better(i, j int) bool {
	if wi, wj := r.weights[i], r.weights[j]; wi != wj {
		return wi > wj
	}
	if r.pivot > 0 {
		ci, cj := r.cands[i], r.cands[j]
		if ai, aj := ci >= r.pivot, cj >= r.pivot; ai != aj {
			return ai
		}
		return ci < cj
	}
	a, b := r.views[r.cands[i]].Host.ID, r.views[r.cands[j]].Host.ID
	if a != b {
		return a < b
	}
	return r.cands[i] < r.cands[j]
}

// best returns the positions of the n best candidates, best first, in
// dst's storage. It keeps a heap of the n best seen so far (its root the
// worst of them), so it never sorts all candidates: O(len·log n).
func (r *ranking) best(dst []int, n int) []int {
	dst = dst[:0]
	if n == 1 {
		b := 0
		for i := 1; i < len(r.cands); i++ {
			if r.better(i, b) {
				b = i
			}
		}
		return append(dst, b)
	}
	for i := range r.cands {
		if len(dst) < n {
			dst = append(dst, i)
			r.siftUp(dst, len(dst)-1)
		} else if r.better(i, dst[0]) {
			dst[0] = i
			r.siftDown(dst, 0)
		}
	}
	slices.SortFunc(dst, func(a, b int) int {
		if r.better(a, b) {
			return -1
		}
		return 1
	})
	return dst
}

// The heap keeps the worst candidate at the root.
func (r *ranking) siftUp(h []int, k int) {
	for k > 0 {
		p := (k - 1) / 2
		if !r.better(h[p], h[k]) {
			return
		}
		h[p], h[k] = h[k], h[p]
		k = p
	}
}

func (r *ranking) siftDown(h []int, k int) {
	for {
		w := k
		if l := 2*k + 1; l < len(h) && r.better(h[w], h[l]) {
			w = l
		}
		if rt := 2*k + 2; rt < len(h) && r.better(h[w], h[rt]) {
			w = rt
		}
		if w == k {
			return
		}
		h[k], h[w] = h[w], h[k]
		k = w
	}
}
