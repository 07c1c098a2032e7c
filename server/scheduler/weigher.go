package scheduler

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
	return []Weigher{RAMWeigher{}, CPUWeigher{}, DiskWeigher{}, BuildFailureWeigher{}}
}

// normalize scales values to [0,1] in place as Nova's weights.normalize
// does: (v-min)/(max-min), and all zeros when every value is the same.
func normalize(values []float64) {
	if len(values) == 0 {
		return
	}
	lo, hi := values[0], values[0]
	for _, v := range values[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	span := hi - lo
	for i, v := range values {
		if span == 0 {
			values[i] = 0
		} else {
			values[i] = (v - lo) / span
		}
	}
}

// weigh fills weights[i] with the total weight of views[cands[i]], using
// raw as scratch; both have len(cands).
func weigh(weighers []Weigher, cfg Config, views []HostView, cands []int32, req *Request, raw, weights []float64) {
	clear(weights)
	for _, w := range weighers {
		m := w.Multiplier(cfg)
		if m == 0 {
			continue
		}
		for i, c := range cands {
			raw[i] = w.Weigh(&views[c], req)
		}
		normalize(raw)
		for i, v := range raw {
			weights[i] += m * v
		}
	}
}
