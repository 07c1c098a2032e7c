package scheduler

import "math"

// Weigher ranks the hosts that passed the filters, as Nova's weighers
// do: Weigh returns a raw value (higher is better), the scheduler
// normalises each weigher's values to [0,1] across the candidate hosts,
// multiplies them by Multiplier and sums the weighers.
type Weigher interface {
	// Name is the weigher's Nova name, such as "RAMWeigher".
	Name() string
	// Multiplier returns the weigher's multiplier in cfg; 0 disables it.
	Multiplier(cfg Config) float64
	// Weigh returns the raw weight of h for req.
	Weigh(h *HostView, req *Request) float64
}

// DefaultWeighers returns the weighers Schedule uses.
func DefaultWeighers() []Weigher {
	return []Weigher{RAMWeigher{}, CPUWeigher{}, DiskWeigher{}, BuildFailureWeigher{},
		ServerGroupSoftAffinityWeigher{}, ServerGroupSoftAntiAffinityWeigher{}}
}

// weigh fills weights[i] with the total weight of views[cands[i]], using
// raw as scratch; both have len(cands). Each weigher's raw values are
// normalised as Nova's weights.normalize does — (v-min)/(max-min), all
// zeros when every value is the same — then multiplied and summed.
func weigh(weighers []Weigher, cfg Config, views []HostView, cands []int32, req *Request, raw, weights []float64) {
	clear(weights)
	for _, w := range weighers {
		m := w.Multiplier(cfg)
		if m == 0 || len(cands) == 0 {
			continue
		}
		addNormalized(weights, rawWeights(w, views, cands, req, raw), m)
	}
}

// rawWeights fills raw (len(cands)) with w's raw value of each candidate.
func rawWeights(w Weigher, views []HostView, cands []int32, req *Request, raw []float64) []float64 {
	for i, c := range cands {
		raw[i] = w.Weigh(&views[c], req)
	}
	return raw
}

// addNormalized adds m times raw, normalised to [0,1], to weights.
func addNormalized(weights, raw []float64, m float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range raw {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	span := hi - lo
	if span == 0 {
		return // every host normalises to 0
	}
	for i, v := range raw {
		weights[i] += m * ((v - lo) / span)
	}
}
