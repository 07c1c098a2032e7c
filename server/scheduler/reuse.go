package scheduler

import (
	"maps"
	"reflect"
	"sort"

	"github.com/stratus-cloud/stratus/structs"
)

// Reusing a decision's work for the next instance. A multi-create's
// instances ask for the same thing, and between two of them only the
// host the first one took has changed. For such a run of equivalent
// requests the scheduler keeps the candidates and each weigher's raw
// values from the first full pass and, for each next instance, runs the
// filters and weighers again on that one host only; normalising and
// ranking the kept values is a few float operations per host. The
// decisions are exactly those of a full pass: every other host's view,
// and so its filter results and raw weights, is unchanged, and the
// weights are combined in the same order. Requests whose filters or
// weighers depend on more than the host's own view — earlier build
// attempts, a target host, hints, a server group — always get a full
// pass, as does any request unlike the one before it.

// reusable reports whether req's filters and weighers depend only on
// each host's view and on what the request itself asks.
func (req *Request) reusable() bool {
	inst := req.Instance
	if len(req.tried) > 0 || inst.TargetHostID != "" || inst.ServerGroupID != "" {
		return false
	}
	if h := inst.Hints; h != nil && (len(h.SameHost) > 0 || len(h.DifferentHost) > 0) {
		return false
	}
	return req.place == nil || req.place.group == nil
}

// sameAsks reports whether a and b, both reusable, would pass and weigh
// every host alike: they come from equal flavors, image properties,
// constraints, zone and project, which is everything a request is
// worked out from (NewRequest, placement.bind).
func sameAsks(a, b *Request) bool {
	x, y := a.Instance, b.Instance
	if x.AZ != y.AZ || x.ProjectID != y.ProjectID {
		return false
	}
	if x.Flavor != y.Flavor && (x.Flavor == nil || y.Flavor == nil || !reflect.DeepEqual(*x.Flavor, *y.Flavor)) {
		return false
	}
	if !maps.Equal(x.ImageProperties, y.ImageProperties) {
		return false
	}
	return len(x.Constraints) == 0 && len(y.Constraints) == 0 || reflect.DeepEqual(x.Constraints, y.Constraints)
}

// reuseFor reports whether the kept candidates can serve req, after
// bringing them up to date with the last placement: the host it took is
// filtered again (and dropped when it no longer passes) and weighed
// again. It is false when there is nothing to reuse, req is unlike the
// request they were made for, or no candidate is left (the full pass
// then explains why).
func (s *run) reuseFor(req *Request) bool {
	if !s.reuse || s.prev == nil || s.last < 0 || !req.reusable() || !sameAsks(s.prev, req) {
		return false
	}
	last := s.last
	s.last = -1
	pos := sort.Search(len(s.cands), func(i int) bool { return s.cands[i] >= last })
	if pos == len(s.cands) || s.cands[pos] != last {
		return false
	}
	v := &s.views[last]
	for _, f := range s.active {
		if ok, _ := f.Filter(v, req); !ok {
			s.cands = append(s.cands[:pos], s.cands[pos+1:]...)
			for k := range s.rawW {
				s.rawW[k] = append(s.rawW[k][:pos], s.rawW[k][pos+1:]...)
			}
			s.prev = req
			return len(s.cands) > 0
		}
	}
	for k, w := range s.activeW {
		s.rawW[k][pos] = w.Weigh(v, req)
	}
	s.prev = req
	return true
}

// keep records the candidates' raw weights after a full pass, so that
// the next equivalent request can reuse them; a request that cannot be
// reused clears what was kept.
func (s *run) keep(req *Request) {
	s.prev, s.last = nil, -1
	if !s.reuse || !req.reusable() {
		return
	}
	s.prev = req
	for k, w := range s.activeW {
		s.rawW[k] = rawWeights(w, s.views, s.cands, req, grow(s.rawW[k], len(s.cands)))
	}
}

// prepareWeighers lists the weighers whose multiplier is not 0, with a
// raw-value buffer each.
func (s *run) prepareWeighers() {
	s.activeW, s.mults = s.activeW[:0], s.mults[:0]
	for _, w := range s.weighers {
		if m := w.Multiplier(s.cfg); m != 0 {
			s.activeW = append(s.activeW, w)
			s.mults = append(s.mults, m)
		}
	}
	for len(s.rawW) < len(s.activeW) {
		s.rawW = append(s.rawW, nil)
	}
	s.rawW = s.rawW[:len(s.activeW)]
}

// weighKept fills s.weights from the kept raw values.
func (s *run) weighKept() {
	s.weights = grow(s.weights, len(s.cands))
	clear(s.weights)
	for k := range s.activeW {
		addNormalized(s.weights, s.rawW[k], s.mults[k])
	}
}

// pick chooses among the candidates and counts the placement against
// the host.
func (s *run) pick(req *Request, weighed bool) *HostView {
	chosen := s.cands[0]
	if len(s.cands) > 1 {
		if !weighed {
			s.raw, s.weights = grow(s.raw, len(s.cands)), grow(s.weights, len(s.cands))
			weigh(s.weighers, s.cfg, s.views, s.cands, req, s.raw, s.weights)
		}
		r := ranking{views: s.views, cands: s.cands, weights: s.weights, pivot: s.pivot}
		s.top = r.best(s.top, min(s.cfg.HostSubsetSize, len(s.cands)))
		p := 0
		if len(s.top) > 1 {
			p = s.rng.IntN(len(s.top))
		}
		chosen = s.cands[s.top[p]]
	}
	v := &s.views[chosen]
	v.consume(req.Resources)
	s.last = chosen
	return v
}

// placementFailure explains why no host passed the filters.
func (s *run) placementFailure(req *Request) *structs.PlacementFailure {
	filtered := s.counts.toMap()
	return &structs.PlacementFailure{
		InstanceID:     req.Instance.ID,
		Explanation:    Explanation(len(s.views), filtered),
		Filtered:       filtered,
		FilteredBy:     s.byFilter.toMap(),
		HostsEvaluated: len(s.views),
	}
}
