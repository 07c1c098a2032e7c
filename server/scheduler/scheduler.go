package scheduler

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/stratus-cloud/stratus/structs"
)

// State is the read-only view the scheduler decides on: a state-store
// snapshot in production, a slice in tests.
type State interface {
	// Hosts returns every host. The scheduler must not modify them.
	Hosts() ([]*structs.Host, error)
}

// Config holds the scheduler's tunables, named after Nova's
// [filter_scheduler] options.
type Config struct {
	// RAMWeightMultiplier, CPUWeightMultiplier and DiskWeightMultiplier
	// scale the resource weighers: positive spreads instances (prefer
	// the most free), negative packs them, 0 ignores the resource.
	RAMWeightMultiplier, CPUWeightMultiplier, DiskWeightMultiplier float64
	// BuildFailureWeightMultiplier scales BuildFailureWeigher.
	BuildFailureWeightMultiplier float64
	// HostSubsetSize is Nova's host_subset_size: each instance goes to a
	// host picked at random among the best HostSubsetSize (values below
	// 1 mean 1).
	HostSubsetSize int
	// SoftAffinityWeightMultiplier and SoftAntiAffinityWeightMultiplier
	// scale the soft server group weighers (Nova's
	// soft_affinity_weight_multiplier and
	// soft_anti_affinity_weight_multiplier).
	SoftAffinityWeightMultiplier, SoftAntiAffinityWeightMultiplier float64
}

// DefaultConfig returns Nova's defaults.
func DefaultConfig() Config {
	return Config{
		RAMWeightMultiplier:          1.0,
		CPUWeightMultiplier:          1.0,
		DiskWeightMultiplier:         1.0,
		BuildFailureWeightMultiplier: 1000000.0,
		HostSubsetSize:               1,

		SoftAffinityWeightMultiplier:     1.0,
		SoftAntiAffinityWeightMultiplier: 1.0,
	}
}

// Schedule places every instance of eval and returns the plan; it never
// writes state. instances are the eval's instances, in order; each is
// placed counting the placements made before it. An instance no host can
// take, or whose flavor is malformed, becomes a PlacementFailure; only a
// failure to read state, or a missing eval or instance, is an error.
//
// rng picks among the best HostSubsetSize hosts and generates allocation
// IDs, so a seeded source (rand.New(rand.NewPCG(s1, s2))) reproduces a
// plan; nil uses a randomly seeded one. The plan's SnapshotIndex and
// EvalToken are left for the caller to set.
func Schedule(state State, eval *structs.Evaluation, instances []*structs.Instance, cfg Config, rng *rand.Rand) (*structs.Plan, error) {
	return scheduleWith(nil, state, eval, instances, cfg, rng, true)
}

// scheduleReusing is Schedule, with reuse across equivalent requests
// (reuse.go) turned off when reuse is false: tests compare both.
func scheduleReusing(state State, eval *structs.Evaluation, instances []*structs.Instance, cfg Config, rng *rand.Rand, reuse bool) (*structs.Plan, error) {
	return scheduleWith(nil, state, eval, instances, cfg, rng, reuse)
}

// scheduleWith is Schedule with an optional host cache (hostcache.go)
// and reuse across equivalent requests (reuse.go) on or off.
func scheduleWith(cache *HostCache, state State, eval *structs.Evaluation, instances []*structs.Instance, cfg Config, rng *rand.Rand, reuse bool) (*structs.Plan, error) {
	if state == nil || eval == nil {
		return nil, structs.Errorf(structs.KindInvalid, "schedule: no state or no evaluation")
	}
	hosts, err := state.Hosts()
	if err != nil {
		return nil, fmt.Errorf("schedule eval %s: reading hosts: %w", eval.ID, err)
	}
	if rng == nil {
		rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	var topo *Topology
	if ts, ok := state.(TopologyState); ok {
		if topo, err = ts.Topology(instances); err != nil {
			return nil, fmt.Errorf("schedule eval %s: reading topology: %w", eval.ID, err)
		}
	}
	place := newPlacement(topo)
	s := newRun(hosts, cfg, rng)
	s.reuse = reuse
	cache.fill(s.views)
	defer s.release()
	plan := &structs.Plan{EvalID: eval.ID}
	for _, inst := range instances {
		if inst == nil {
			return nil, structs.Errorf(structs.KindInvalid, "schedule eval %s: nil instance", eval.ID)
		}
		req, err := NewRequest(inst)
		if err != nil {
			plan.Failures = append(plan.Failures, &structs.PlacementFailure{
				InstanceID: inst.ID, Explanation: err.Error(),
			})
			continue
		}
		place.bind(req)
		v, failure := s.place(req)
		if failure != nil {
			plan.Failures = append(plan.Failures, failure)
			continue
		}
		place.record(req, v.Host.ID)
		plan.Placements = append(plan.Placements, &structs.Allocation{
			ID:           newUUID(rng),
			InstanceID:   inst.ID,
			HostID:       v.Host.ID,
			EvalID:       eval.ID,
			Resources:    req.Resources,
			DesiredState: structs.AllocDesiredRunning,
			ClientState:  structs.AllocClientPending,
		})
	}
	return plan, nil
}

// run is the working memory of one Schedule call, reused across its
// instances so a placement allocates nothing per host.
type run struct {
	cfg      Config
	rng      *rand.Rand
	filters  []Filter
	weighers []Weigher
	views    []HostView
	active   []Filter
	cands    []int32
	raw      []float64
	weights  []float64
	top      []int
	counts   reasonCounts
	byFilter reasonCounts
	// pivot is where ties among equally weighted hosts start (ranking).
	pivot int32

	// Reuse across equivalent requests (reuse.go): whether it is on,
	// the request the kept candidates were made for (nil: none), the
	// view the last placement took (-1: none), the weighers with a
	// multiplier, their multipliers and each one's raw value per
	// candidate.
	reuse   bool
	prev    *Request
	last    int32
	activeW []Weigher
	mults   []float64
	rawW    [][]float64
}

// runs recycles the working memory of Schedule calls, so a call over
// many hosts does not allocate (and make the collector scan) a view of
// every host each time.
var runs = sync.Pool{New: func() any { return new(run) }}

// newRun prepares a run over hosts.
func newRun(hosts []*structs.Host, cfg Config, rng *rand.Rand) *run {
	if cfg.HostSubsetSize < 1 {
		cfg.HostSubsetSize = 1
	}
	s := runs.Get().(*run)
	s.cfg, s.rng = cfg, rng
	if s.filters == nil {
		s.filters, s.weighers = DefaultFilters(), DefaultWeighers()
	}
	s.reuse, s.prev, s.last = true, nil, -1
	s.prepareWeighers()
	s.views = s.views[:0]
	for _, h := range hosts {
		if h != nil {
			s.views = append(s.views, HostView{Host: h})
		}
	}
	s.pivot = 0
	if len(s.views) > 1 {
		s.pivot = int32(rng.IntN(len(s.views)))
	}
	return s
}

// release returns the run to the pool without keeping hosts alive.
func (s *run) release() {
	clear(s.views)
	s.rng, s.prev = nil, nil
	runs.Put(s)
}

// place picks a host for req and counts the placement against it, or
// explains why no host can take it. A request like the one before it
// reuses that one's candidates (reuse.go).
func (s *run) place(req *Request) (*HostView, *structs.PlacementFailure) {
	if s.reuseFor(req) {
		s.weighKept()
		return s.pick(req, true), nil
	}
	s.active = activeFilters(s.active[:0], s.filters, req)
	s.cands = s.cands[:0]
	s.counts.reset()
	s.byFilter.reset()
hosts:
	for i := range s.views {
		v := &s.views[i]
		for _, f := range s.active {
			if ok, reason := f.Filter(v, req); !ok {
				if reason == "" {
					reason = f.Name()
				}
				s.counts.add(reason)
				s.byFilter.add(f.Name())
				continue hosts
			}
		}
		s.cands = append(s.cands, int32(i))
	}
	if len(s.cands) == 0 {
		s.prev, s.last = nil, -1
		return nil, s.placementFailure(req)
	}
	s.keep(req)
	if s.prev != nil {
		s.weighKept()
		return s.pick(req, true), nil
	}
	return s.pick(req, false), nil
}

// grow returns buf with length n, reusing its storage when it can.
func grow(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

// newUUID returns a version 4 UUID drawn from rng, so allocation IDs are
// reproducible for a seed.
func newUUID(rng *rand.Rand) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], rng.Uint64())
	binary.BigEndian.PutUint64(b[8:], rng.Uint64())
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}
