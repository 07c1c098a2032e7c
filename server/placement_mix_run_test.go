package server

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// mixRequest is one create of BenchmarkPlacementMix's mix.
type mixRequest struct {
	kind   string
	flavor string
	policy string // the group's policy, for group creates
}

// mixPick draws request r of round n: 55 % plain creates of a weighted
// flavor, 15 % of the ssd flavor, 15 % affinity and 15 % anti-affinity
// group members (m1.small).
func mixPick(n, r int) mixRequest {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(r)))
	switch roll := rng.IntN(100); {
	case roll < 55:
		w := rng.IntN(100)
		for _, f := range mixFlavors {
			if w < f.weight {
				return mixRequest{kind: mixPlain, flavor: f.id}
			}
			w -= f.weight
		}
		return mixRequest{kind: mixPlain, flavor: mixFlavors[0].id}
	case roll < 70:
		return mixRequest{kind: mixSSD, flavor: mixSSDFlavor.ID}
	case roll < 85:
		return mixRequest{kind: mixAffinity, flavor: "2", policy: structs.PolicyAffinity}
	default:
		return mixRequest{kind: mixAntiAffinity, flavor: "2", policy: structs.PolicyAntiAffinity}
	}
}

// groupFor gives the next create of policy in project its group: each
// group takes mixAffinitySize (or mixAntiAffinitySize) creates in turn.
func (m *mixBench) groupFor(project, policy string) (string, error) {
	size := mixAffinitySize
	if policy == structs.PolicyAntiAffinity {
		size = mixAntiAffinitySize
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := project + "/" + policy
	i := m.next[key] / size
	m.next[key]++
	groups := m.groups[project][policy]
	if i >= len(groups) {
		return "", fmt.Errorf("out of %s groups in project %s (%d)", policy, project, len(groups))
	}
	return groups[i], nil
}

// round sends creates single-instance creates from mixClients clients,
// each over its own TCP connection with its own token, and waits until
// every instance has a host or a fault.
func (m *mixBench) round(b *testing.B, n, creates int) mixRound {
	obs := newMixObserver(m.pb)
	cpuStart := processCPU()
	// The observer sweeps while the creates go out, so that each
	// placement is timed when it happens.
	watched := make(chan struct{})
	go func() { defer close(watched); obs.watch() }()
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < mixClients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := m.clients[w]
			for r := range work {
				obs.sent(m.create(c, n, r, obs))
			}
		}()
	}
	for r := 0; r < creates; r++ {
		work <- r
	}
	close(work)
	wg.Wait()
	obs.allSent()
	<-watched
	if err := obs.failure(); err != nil {
		b.Fatal(err)
	}
	res := obs.result()
	res.cpu = processCPU() - cpuStart
	return res
}

// mixSent is one create's outcome as its client saw it.
type mixSent struct {
	kind     string
	start    time.Time
	accepted time.Time
	id       string // the instance, when the create was accepted
	err      error
}

// create sends request r of round n from client c over TCP, again while
// the cluster has no leader (with an idempotency key, so a lost answer
// does not make two instances).
func (m *mixBench) create(c *mixClient, n, r int, obs *mixObserver) mixSent {
	pick := mixPick(n, r)
	sent := mixSent{kind: pick.kind, start: time.Now()}
	obs.started(sent.start)
	req := &structs.InstanceCreateRequest{Name: fmt.Sprintf("mix-%d-%d", n, r), FlavorID: pick.flavor, ImageID: "cirros",
		Count: 1, ProjectID: c.project, IdempotencyKey: fmt.Sprintf("mix-%d-%d", n, r),
		WriteRequest: structs.WriteRequest{AuthToken: c.token}}
	if pick.policy != "" {
		g, err := m.groupFor(c.project, pick.policy)
		if err != nil {
			sent.err = err
			return sent
		}
		req.Hints = &structs.SchedulerHints{Group: g}
	}
	var out structs.InstanceCreateResponse
	sent.err = m.pb.retry(req.Name, func() error {
		out = structs.InstanceCreateResponse{}
		return c.conns.RPC(c.addr, "Instance.Create", req, &out)
	})
	sent.accepted = time.Now()
	if sent.err == nil && len(out.Instances) == 1 {
		sent.id = out.Instances[0].ID
	} else if sent.err == nil {
		sent.err = fmt.Errorf("create answered %d instances, want 1", len(out.Instances))
	}
	return sent
}

// mixObserver watches the leader's state for the instances of accepted
// creates and records when each has a host or a fault.
type mixObserver struct {
	pb *placementBench

	mu       sync.Mutex
	first    time.Time
	pending  map[string]mixSent
	res      mixRound
	progress time.Time
	done     bool  // every create has been answered
	err      error // why watch gave up
}

// mixRound is what one round measured.
type mixRound struct {
	first, lastAccept, lastPlaced time.Time
	accepts, latencies            []time.Duration
	// failures counts failed creates by "kind: reason".
	failures map[string]int
	placed   int
	cpu      time.Duration
}

func newMixObserver(pb *placementBench) *mixObserver {
	return &mixObserver{pb: pb, pending: map[string]mixSent{}, res: mixRound{failures: map[string]int{}}}
}

// started records a create's send time (the round starts at the first).
func (o *mixObserver) started(t time.Time) {
	o.mu.Lock()
	if o.first.IsZero() {
		o.first = t
	}
	o.mu.Unlock()
}

// sent records a create's answer: an accepted one is watched until
// placed, a refused one is a failure at once.
func (o *mixObserver) sent(s mixSent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s.err != nil {
		msg := s.err.Error()
		if len(msg) > 80 {
			msg = msg[:80]
		}
		o.res.failures[s.kind+": create refused ("+string(structs.KindOf(s.err))+"): "+msg]++
		return
	}
	o.res.accepts = append(o.res.accepts, s.accepted.Sub(s.start))
	o.res.lastAccept = s.accepted
	o.pending[s.id] = s
}

// watch sweeps the pending instances every 2 ms until every create
// has been answered (allSent) and none is left, or none was placed for
// benchStallTimeout (then failure says so).
func (o *mixObserver) watch() {
	o.mu.Lock()
	o.progress = time.Now()
	o.mu.Unlock()
	for {
		done := o.sweep()
		o.mu.Lock()
		finished, stalled := done && o.done, time.Since(o.progress) > benchStallTimeout
		if stalled && !finished {
			o.err = fmt.Errorf("%d instances still without a host or a fault after %s without progress; %s",
				len(o.pending), benchStallTimeout, o.pb.describe())
		}
		o.mu.Unlock()
		if finished || stalled {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// allSent tells the observer that every create has been answered.
func (o *mixObserver) allSent() {
	o.mu.Lock()
	o.done = true
	o.mu.Unlock()
}

// failure is why the observer gave up, if it did.
func (o *mixObserver) failure() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// sweep looks each pending instance up once and reports whether none is
// left.
func (o *mixObserver) sweep() bool {
	state := o.pb.leaderOrFirst().fsm.State()
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	for id, s := range o.pending {
		inst, err := state.InstanceByID(nil, id)
		if err != nil || inst == nil {
			continue // not applied on this server yet
		}
		switch {
		case inst.HostID != "":
			o.res.latencies = append(o.res.latencies, now.Sub(s.start))
			o.res.placed++
			o.res.lastPlaced = now
		case inst.VMState == structs.VMStateError:
			o.res.failures[s.kind+": "+faultReason(inst.Fault)]++
			o.res.lastPlaced = now
		default:
			continue
		}
		delete(o.pending, id)
		o.progress = now
	}
	return len(o.pending) == 0
}

// faultReason is a scheduling fault's rejection reasons without their
// counts, most frequent first: "0/1000 hosts: 999 server group affinity,
// 1 insufficient MEMORY_MB" gives "server group affinity, insufficient
// MEMORY_MB" (the group's one host is full), which tells more than the
// first reason alone.
func faultReason(f *structs.Fault) string {
	if f == nil {
		return "error without a fault"
	}
	_, rest, ok := strings.Cut(f.Message, " hosts: ")
	if !ok {
		return f.Message
	}
	var reasons []string
	for _, part := range strings.Split(rest, ", ") {
		if _, reason, ok := strings.Cut(part, " "); ok {
			part = reason
		}
		reasons = append(reasons, part)
	}
	return strings.Join(reasons, ", ")
}

// result is the round's measurements.
func (o *mixObserver) result() mixRound {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.res
	r.first = o.first
	return r
}

// mixResult sums the rounds.
type mixResult struct {
	elapsed, acceptElapsed, cpu time.Duration
	placed, accepted            int
	latencies, accepts          []time.Duration
	failures                    map[string]int
}

func (r *mixResult) add(x mixRound) {
	r.elapsed += x.lastPlaced.Sub(x.first)
	r.acceptElapsed += x.lastAccept.Sub(x.first)
	r.cpu += x.cpu
	r.placed += x.placed
	r.accepted += len(x.accepts)
	r.latencies = append(r.latencies, x.latencies...)
	r.accepts = append(r.accepts, x.accepts...)
	if r.failures == nil {
		r.failures = map[string]int{}
	}
	for k, v := range x.failures {
		r.failures[k] += v
	}
}

// report prints the figures and fails the benchmark when fewer than half
// the creates were placed: a mix that mostly fails measures nothing.
func (r *mixResult) report(b *testing.B) {
	failed := 0
	for _, n := range r.failures {
		failed += n
	}
	p50, p99 := percentiles(r.latencies)
	a50, a99 := percentiles(r.accepts)
	b.ReportMetric(float64(r.placed)/r.elapsed.Seconds(), "placements/s")
	b.ReportMetric(float64(r.accepted)/r.acceptElapsed.Seconds(), "accepted/s")
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(a50.Microseconds())/1000, "accept-p50-ms")
	b.ReportMetric(float64(a99.Microseconds())/1000, "accept-p99-ms")
	b.ReportMetric(float64(r.cpu.Microseconds())/float64(max(r.placed, 1)), "cpu-µs/placement")
	b.ReportMetric(float64(failed), "failures")
	reasons := make([]string, 0, len(r.failures))
	for k := range r.failures {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	var lines []string
	for _, k := range reasons {
		b.ReportMetric(float64(r.failures[k]), "fail:"+strings.NewReplacer(" ", "_", ":", "", ",", "").Replace(k))
		lines = append(lines, fmt.Sprintf("%6d  %s", r.failures[k], k))
	}
	b.Logf("%d placed, %d failed; placement p50 %v p99 %v; create answered p50 %v p99 %v; failures by kind and reason:\n%s",
		r.placed, failed, p50, p99, a50, a99, strings.Join(lines, "\n"))
	if r.placed < failed {
		b.Fatalf("%d creates placed, %d failed: the mix measures failures, not placements", r.placed, failed)
	}
}

// checkGroups checks on the leader that every affinity group's placed
// members share one host and every anti-affinity group's are on
// distinct hosts.
func (m *mixBench) checkGroups(b *testing.B) {
	state := m.pb.leaderOrFirst().fsm.State()
	for _, byPolicy := range m.groups {
		for policy, ids := range byPolicy {
			for _, id := range ids {
				g, err := state.ServerGroupByID(nil, id)
				if err != nil || g == nil {
					b.Fatalf("group %s: %v", id, err)
				}
				hosts := map[string]int{}
				placed := 0
				for _, member := range g.Members {
					inst, _ := state.InstanceByID(nil, member)
					if inst != nil && inst.HostID != "" {
						hosts[inst.HostID]++
						placed++
					}
				}
				if policy == structs.PolicyAffinity && len(hosts) > 1 {
					b.Fatalf("affinity group %s spread over %d hosts: %v", id, len(hosts), hosts)
				}
				if policy == structs.PolicyAntiAffinity && len(hosts) != placed {
					b.Fatalf("anti-affinity group %s has %d members on %d hosts", id, placed, len(hosts))
				}
			}
		}
	}
}
