package loadtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Call kinds of the workload.
const (
	KindListServers = "list servers"
	KindShowServer  = "show server"
	KindListFlavors = "list flavors"
	KindShowFlavor  = "show flavor"
	KindBoot        = "boot"
	KindDelete      = "delete"
)

// Stats gathers every call's latency and outcome, per kind.
type Stats struct {
	mu   sync.Mutex
	lat  map[string][]time.Duration
	errs map[string]int
	// samples of errors by kind, the first few.
	examples map[string][]string
	limited  int
	// ambiguous are the names of boots whose answer was lost or a 5xx:
	// the server may exist without the client knowing its id.
	ambiguous map[string]bool
}

// NewStats returns empty statistics.
func NewStats() *Stats {
	return &Stats{lat: map[string][]time.Duration{}, errs: map[string]int{}, examples: map[string][]string{},
		ambiguous: map[string]bool{}}
}

func (s *Stats) record(kind string, d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lat[kind] = append(s.lat[kind], d)
	if err != nil {
		s.errs[kind]++
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests {
			s.limited++
		}
		if len(s.examples[kind]) < 3 {
			s.examples[kind] = append(s.examples[kind], err.Error())
		}
	}
}

// KindStats is one call kind's figures.
type KindStats struct {
	Kind     string
	Calls    int
	Errors   int
	P50, P99 time.Duration
	Max      time.Duration
	Examples []string
}

// Summary returns the figures per kind and the count of 429 answers.
func (s *Stats) Summary() ([]KindStats, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []KindStats
	for kind, lat := range s.lat {
		l := slices.Clone(lat)
		slices.Sort(l)
		pct := func(p float64) time.Duration { return l[min(len(l)-1, int(float64(len(l))*p))] }
		out = append(out, KindStats{Kind: kind, Calls: len(l), Errors: s.errs[kind], P50: pct(0.5), P99: pct(0.99),
			Max: l[len(l)-1], Examples: s.examples[kind]})
	}
	slices.SortFunc(out, func(a, b KindStats) int { return b.Calls - a.Calls })
	return out, s.limited
}

// Workload is the load's shape.
type Workload struct {
	Clients int
	// ChurnEvery makes one client in this many boot and delete servers;
	// the others read.
	ChurnEvery int
	// Think is the mean pause between a client's calls.
	Think time.Duration
	// Endpoints are the API base URLs the clients spread over.
	Endpoints []string
}

// Run drives the workload until ctx ends.
func (w *Workload) Run(ctx context.Context, hc *http.Client, f *Fixture, stats *Stats) {
	var wg sync.WaitGroup
	n := len(f.Projects)
	for i := range w.Clients {
		// Clients go round the projects; the churners are spread over
		// them too, so each project has its share (within its quota).
		c := &client{id: i, hc: hc, base: w.Endpoints[i%len(w.Endpoints)], project: f.Projects[i%n],
			fixture: f, stats: stats, think: w.Think, churn: w.ChurnEvery > 0 && (i/n)%w.ChurnEvery == 0}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.run(ctx)
		}()
	}
	wg.Wait()
}

// client is one API client: a reader or a churner.
type client struct {
	id      int
	hc      *http.Client
	base    string
	project *Project
	fixture *Fixture
	stats   *Stats
	think   time.Duration
	churn   bool
	seq     int
}

func (c *client) run(ctx context.Context) {
	// Spread the start over one think time so the clients do not march
	// in step.
	if !c.sleep(ctx, time.Duration(rand.Int64N(int64(c.think)+1))) {
		return
	}
	for ctx.Err() == nil {
		if c.churn {
			c.churnOnce(ctx)
		} else {
			c.readOnce(ctx)
		}
		if !c.sleep(ctx, c.think/2+time.Duration(rand.Int64N(int64(c.think)+1))) {
			return
		}
	}
}

func (c *client) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// do times one call; a call cut short by the end of the run is not
// counted.
func (c *client) do(ctx context.Context, kind, method, path string, in, out any, want int) error {
	start := time.Now()
	_, err := call(ctx, c.hc, method, c.base+path, c.project.Token, in, out, want)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	c.stats.record(kind, time.Since(start), err)
	return err
}

// readOnce is one read: list or show servers or flavors.
func (c *client) readOnce(ctx context.Context) {
	switch rand.IntN(4) {
	case 0:
		_ = c.do(ctx, KindListServers, "GET", "/compute/v2.1/servers/detail", nil, nil, 200)
	case 1:
		var list struct {
			Servers []struct{ ID string } `json:"servers"`
		}
		if err := c.do(ctx, KindListServers, "GET", "/compute/v2.1/servers", nil, &list, 200); err != nil || len(list.Servers) == 0 {
			return
		}
		id := list.Servers[rand.IntN(len(list.Servers))].ID
		// A churner may delete it meanwhile: 404 is a right answer.
		start := time.Now()
		_, err := call(ctx, c.hc, "GET", c.base+"/compute/v2.1/servers/"+id, c.project.Token, nil, nil, 200)
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
			err = nil
		}
		if ctx.Err() == nil {
			c.stats.record(KindShowServer, time.Since(start), err)
		}
	case 2:
		_ = c.do(ctx, KindListFlavors, "GET", "/compute/v2.1/flavors/detail", nil, nil, 200)
	default:
		_ = c.do(ctx, KindShowFlavor, "GET", "/compute/v2.1/flavors/"+c.fixture.Flavor, nil, nil, 200)
	}
}

// churnOnce boots a server, waits for ACTIVE, deletes it and waits
// until it is gone.
func (c *client) churnOnce(ctx context.Context) {
	c.seq++
	var created struct {
		Server struct{ ID string } `json:"server"`
	}
	name := fmt.Sprintf("load-%d-%d", c.id, c.seq)
	if !c.boot(ctx, name, &created.Server.ID) {
		return
	}
	id := created.Server.ID
	// Wait for ACTIVE (or ERROR) before deleting, polling as a client
	// would.
	for ctx.Err() == nil {
		var s struct {
			Server struct{ Status string } `json:"server"`
		}
		if err := c.do(ctx, KindShowServer, "GET", "/compute/v2.1/servers/"+id, nil, &s, 200); err == nil &&
			(s.Server.Status == "ACTIVE" || s.Server.Status == "ERROR") {
			break
		}
		if !c.sleep(ctx, c.think) {
			break
		}
	}
	// Delete even when the run is ending, so the end state is the live
	// state.
	if !c.delete(id) || ctx.Err() != nil {
		return
	}
	for ctx.Err() == nil {
		_, err := call(ctx, c.hc, "GET", c.base+"/compute/v2.1/servers/"+id, c.project.Token, nil, nil, 200)
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
			return
		}
		if !c.sleep(ctx, c.think) {
			return
		}
	}
}

// delete deletes a server, retrying (as a careful client does) while the
// answer is a 5xx or 429; every failed attempt counts as an error. It
// reports whether the delete was accepted (or the server is gone).
func (c *client) delete(id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for attempt := 0; attempt < 5; attempt++ {
		start := time.Now()
		_, err := call(ctx, c.hc, "DELETE", c.base+"/compute/v2.1/servers/"+id, c.project.Token, nil, nil, http.StatusNoContent)
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusNotFound && attempt > 0 {
			err = nil // an earlier attempt went through after all
		}
		c.stats.record(KindDelete, time.Since(start), err)
		if err == nil {
			return true
		}
		if !errors.As(err, &ae) || (ae.Status < 500 && ae.Status != http.StatusTooManyRequests) {
			return false
		}
		if !c.sleep(ctx, c.think) {
			return false
		}
	}
	return false
}

// boot boots a server named name with an Idempotency-Key of its own,
// retrying with the same key (as a careful client does) while the answer
// is a 5xx, a 429 or lost: a boot that went through is answered with its
// server instead of made again. Every failed attempt counts as an error.
// It reports whether the boot was accepted, with the server's id.
func (c *client) boot(ctx context.Context, name string, id *string) bool {
	body := map[string]any{"server": map[string]any{"name": name,
		"imageRef": c.fixture.Image, "flavorRef": c.fixture.Flavor, "networks": "none"}}
	hdr := http.Header{"Idempotency-Key": {fmt.Sprintf("%s-%d", name, rand.Int64())}}
	var created struct {
		Server struct{ ID string } `json:"server"`
	}
	for attempt := 0; attempt < 5; attempt++ {
		start := time.Now()
		_, err := callWith(ctx, c.hc, "POST", c.base+"/compute/v2.1/servers", c.project.Token, hdr, body, &created, http.StatusAccepted)
		if ctx.Err() != nil {
			// Cut short by the end of the run: not counted. The server
			// may exist; the same key finds it (or makes it) so that it
			// can be deleted, and the end state is the live state.
			c.settleBoot(name, hdr, body)
			return false
		}
		c.stats.record(KindBoot, time.Since(start), err)
		if err == nil {
			*id = created.Server.ID
			return true
		}
		var ae *apiError
		if errors.As(err, &ae) && ae.Status < 500 && ae.Status != http.StatusTooManyRequests {
			return false // refused: nothing was made
		}
		if !c.sleep(ctx, c.think) {
			break
		}
	}
	c.stats.markAmbiguous(name)
	return false
}

// settleBoot resends a boot cut short by the end of the run, with its
// key, and deletes the server it answers.
func (c *client) settleBoot(name string, hdr http.Header, body any) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var created struct {
		Server struct{ ID string } `json:"server"`
	}
	if _, err := callWith(ctx, c.hc, "POST", c.base+"/compute/v2.1/servers", c.project.Token, hdr, body, &created, http.StatusAccepted); err != nil {
		c.stats.markAmbiguous(name)
		return
	}
	if !c.delete(created.Server.ID) {
		c.stats.markAmbiguous(name)
	}
}

func (s *Stats) markAmbiguous(name string) {
	s.mu.Lock()
	s.ambiguous[name] = true
	s.mu.Unlock()
}

// Ambiguous reports whether a boot of this name had no clear answer.
func (s *Stats) Ambiguous(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ambiguous[name]
}
