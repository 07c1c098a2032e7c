package loadtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a load run.
type Options struct {
	// Cloudctl is the binary to run; Dir holds the agents' data dirs.
	Cloudctl string
	Dir      string
	// Servers and Agents are how many server and fake-driver client
	// agents to start; SimHosts the simulated hosts behind each client.
	Servers, Agents, SimHosts int
	// Projects, Clients, ChurnEvery and Think shape the workload.
	Projects, Clients, ChurnEvery int
	Think                         time.Duration
	Duration                      time.Duration
	// SampleEvery is how often server memory is sampled.
	SampleEvery time.Duration
	// DeletedRetention, EvalGCThreshold and IdempotencyKeyTTL, when set,
	// are the servers' retentions of deleted servers' records, finished
	// evaluations and idempotency keys (e.g. "5m").
	DeletedRetention, EvalGCThreshold, IdempotencyKeyTTL string
	Out                                                  io.Writer
}

// memSeries is one server's RSS samples.
type memSeries struct {
	start, end, max int64
}

// Run starts the cluster, prepares projects, runs the workload for the
// duration and prints the figures.
func Run(ctx context.Context, o Options) error {
	logf := func(format string, args ...any) {
		fmt.Fprintf(o.Out, "%s  %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
	serverArgs, err := serverConfigArgs(o)
	if err != nil {
		return err
	}
	cl, err := StartCluster(o.Cloudctl, o.Dir, o.Servers, o.Agents, o.SimHosts, logf, serverArgs...)
	if err != nil {
		return err
	}
	defer cl.Stop()
	hc := &http.Client{Transport: &http.Transport{
		MaxIdleConns: o.Clients * 2, MaxIdleConnsPerHost: o.Clients,
		DialContext: (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
	}, Timeout: 120 * time.Second}
	base := cl.Servers[0].HTTP
	fx, err := Prepare(ctx, hc, base, o.Projects, logf)
	if err != nil {
		return err
	}
	if err := introduce(ctx, hc, base, fx.Admin, cl.IntroFile); err != nil {
		return err
	}
	if err := waitHosts(ctx, hc, base, fx.Admin, o.Agents*(1+o.SimHosts)); err != nil {
		return err
	}
	liveStart := liveServers(ctx, hc, base, fx.Admin)
	stateStart, err := readState(ctx, hc, base, fx.Admin)
	if err != nil {
		logf("state breakdown: %v", err)
	}
	diskStart := storage(cl)
	idxStart := raftIndexes(ctx, hc, cl, fx.Admin)
	mem := make([]memSeries, len(cl.Servers))
	sample := func() { sampleRSS(cl, mem) }
	sample()
	endpoints := make([]string, 0, len(cl.Servers)+len(cl.Clients))
	for _, p := range append(append([]*Proc{}, cl.Servers...), cl.Clients...) {
		endpoints = append(endpoints, p.HTTP)
	}
	logf("running %d clients (%d churning) over %d endpoints for %s", o.Clients, churners(o), len(endpoints), o.Duration)
	runCtx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(o.SampleEvery)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
				sample()
				logf("rss %s", rssLine(cl, mem))
				if st, err := readState(runCtx, hc, base, fx.Admin); err == nil {
					logf("state %s", stateLine(st))
				}
			}
		}
	}()
	stats := NewStats()
	(&Workload{Clients: o.Clients, ChurnEvery: o.ChurnEvery, Think: o.Think, Endpoints: endpoints}).Run(runCtx, hc, fx, stats)
	wg.Wait()
	sample()
	// Let the last deletes finish, so the end state is the live state.
	liveEnd := liveServers(ctx, hc, base, fx.Admin)
	_ = retry(60*time.Second, func() error {
		if liveEnd = liveServers(ctx, hc, base, fx.Admin); liveEnd > liveStart {
			return fmt.Errorf("%d servers still deleting", liveEnd-liveStart)
		}
		return nil
	})
	diskEnd := storage(cl)
	idxEnd := raftIndexes(ctx, hc, cl, fx.Admin)
	stateEnd, err := readState(ctx, hc, base, fx.Admin)
	if err != nil {
		logf("state breakdown: %v", err)
	}
	report(o, cl, stats, mem, diskStart, diskEnd, liveStart, liveEnd)
	compareStates(o.Out, stateStart, stateEnd)
	printRaftIndexes(o.Out, cl, idxStart, idxEnd)
	if liveEnd > liveStart {
		fmt.Fprintf(o.Out, "servers left: %s\n", leftovers(ctx, hc, base, fx.Admin, stats))
	}
	return nil
}

// sampleRSS adds each server's resident memory now to its series.
func sampleRSS(cl *Cluster, mem []memSeries) {
	for i, p := range cl.Servers {
		rss, err := p.RSS()
		if err != nil {
			continue
		}
		if mem[i].start == 0 {
			mem[i].start = rss
		}
		mem[i].end = rss
		mem[i].max = max(mem[i].max, rss)
	}
}

// printRaftIndexes prints how far each server's log and snapshot moved
// during the run.
func printRaftIndexes(out io.Writer, cl *Cluster, start, end []map[string]int64) {
	for i, p := range cl.Servers {
		fmt.Fprintf(out, "%s raft indexes: last log %d -> %d, last snapshot %d -> %d\n", p.Name,
			start[i]["last_log_index"], end[i]["last_log_index"], start[i]["last_snapshot_index"], end[i]["last_snapshot_index"])
	}
}

// serverConfigArgs writes the servers' configuration file when an
// option needs one and returns the arguments that load it.
func serverConfigArgs(o Options) ([]string, error) {
	body := ""
	for _, kv := range [][2]string{{"deleted_retention", o.DeletedRetention}, {"eval_gc_threshold", o.EvalGCThreshold},
		{"idempotency_key_ttl", o.IdempotencyKeyTTL}} {
		if kv[1] != "" {
			body += fmt.Sprintf("  %s = %q\n", kv[0], kv[1])
		}
	}
	if body == "" {
		return nil, nil
	}
	path := filepath.Join(o.Dir, "server.hcl")
	body = "server {\n" + body + "}\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		return nil, fmt.Errorf("server config: %w", err)
	}
	return []string{"--config", path}, nil
}

func churners(o Options) int {
	if o.ChurnEvery <= 0 {
		return 0
	}
	return (o.Clients + o.ChurnEvery - 1) / o.ChurnEvery
}

// waitHosts waits until n hypervisors are up.
func waitHosts(ctx context.Context, hc *http.Client, base, admin string, n int) error {
	return retry(120*time.Second, func() error {
		var hv struct {
			Hypervisors []struct{ State string } `json:"hypervisors"`
		}
		if _, err := call(ctx, hc, "GET", base+"/compute/v2.1/os-hypervisors/detail", admin, nil, &hv, 200); err != nil {
			return err
		}
		up := 0
		for _, h := range hv.Hypervisors {
			if h.State == "up" {
				up++
			}
		}
		if up < n {
			return fmt.Errorf("%d of %d hypervisors up", up, n)
		}
		return nil
	})
}

// liveServer is one server left at the end.
type liveServer struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// listLive lists every project's servers.
func listLive(ctx context.Context, hc *http.Client, base, admin string) ([]liveServer, error) {
	var list struct {
		Servers []liveServer `json:"servers"`
	}
	_, err := call(ctx, hc, "GET", base+"/compute/v2.1/servers/detail?all_tenants=1&limit=100000", admin, nil, &list, 200)
	return list.Servers, err
}

// liveServers counts every project's servers, -1 when it cannot.
func liveServers(ctx context.Context, hc *http.Client, base, admin string) int {
	l, err := listLive(ctx, hc, base, admin)
	if err != nil {
		return -1
	}
	return len(l)
}

// leftovers explains the servers left at the end: by status, and how
// many come from boots whose answer was lost (a 5xx or a broken
// connection, so the client never learned the id) — the rest the
// clients deleted or never saw fail, and would be a leak.
func leftovers(ctx context.Context, hc *http.Client, base, admin string, stats *Stats) string {
	l, err := listLive(ctx, hc, base, admin)
	if err != nil {
		return "cannot list: " + err.Error()
	}
	byStatus := map[string]int{}
	ambiguous := 0
	for _, s := range l {
		byStatus[s.Status]++
		if stats.Ambiguous(s.Name) {
			ambiguous++
		}
	}
	return fmt.Sprintf("by status %v; %d from boots answered 5xx or lost, %d otherwise", byStatus, ambiguous, len(l)-ambiguous)
}

// storage is each server's Raft storage.
func storage(cl *Cluster) []Storage {
	out := make([]Storage, len(cl.Servers))
	for i, p := range cl.Servers {
		out[i] = p.DiskUsage()
	}
	return out
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func rssLine(cl *Cluster, mem []memSeries) string {
	s := ""
	for i, p := range cl.Servers {
		d := p.DiskUsage()
		s += fmt.Sprintf("%s=%s (raft.db %s, snapshots %s) ", p.Name, mib(mem[i].end), mib(d.RaftDB), mib(d.Snapshots))
	}
	return s
}

// report prints the run's figures.
func report(o Options, cl *Cluster, stats *Stats, mem []memSeries, d0, d1 []Storage, live0, live1 int) {
	w := o.Out
	kinds, limited := stats.Summary()
	total, errs := 0, 0
	fmt.Fprintf(w, "\n== Load: %d clients, %d projects, %d servers, %d client agents x %d hosts, %s ==\n",
		o.Clients, o.Projects, o.Servers, o.Agents, 1+o.SimHosts, o.Duration)
	fmt.Fprintf(w, "%-16s %9s %8s %9s %9s %9s\n", "call", "calls", "errors", "p50", "p99", "max")
	for _, k := range kinds {
		total += k.Calls
		errs += k.Errors
		fmt.Fprintf(w, "%-16s %9d %8d %9s %9s %9s\n", k.Kind, k.Calls, k.Errors,
			k.P50.Round(time.Millisecond), k.P99.Round(time.Millisecond), k.Max.Round(time.Millisecond))
	}
	rate := 0.0
	if total > 0 {
		rate = 100 * float64(errs) / float64(total)
	}
	fmt.Fprintf(w, "total %d calls (%.0f/s), %d errors (%.3f %%), %d rate-limited (429)\n",
		total, float64(total)/o.Duration.Seconds(), errs, rate, limited)
	for _, k := range kinds {
		for _, e := range k.Examples {
			fmt.Fprintf(w, "  error %s: %s\n", k.Kind, e)
		}
	}
	fmt.Fprintln(w, "\nserver    rss start   rss end   rss max   raft.db start -> end   snapshots start -> end")
	for i, p := range cl.Servers {
		fmt.Fprintf(w, "%-8s %10s %9s %9s   %9s -> %-9s   %9s -> %s\n", p.Name, mib(mem[i].start), mib(mem[i].end), mib(mem[i].max),
			mib(d0[i].RaftDB), mib(d1[i].RaftDB), mib(d0[i].Snapshots), mib(d1[i].Snapshots))
	}
	fmt.Fprintf(w, "live servers (instances) at start %d, at end %d\n", live0, live1)
}

// DefaultDir is a fresh directory for the agents' data.
func DefaultDir() (string, error) {
	dir, err := os.MkdirTemp("", "stratus-load-")
	if err != nil {
		return "", fmt.Errorf("load dir: %w", err)
	}
	return filepath.Clean(dir), nil
}

// raftIndexes reads each server's Raft indexes from its metrics.
func raftIndexes(ctx context.Context, hc *http.Client, cl *Cluster, admin string) []map[string]int64 {
	out := make([]map[string]int64, len(cl.Servers))
	for i, p := range cl.Servers {
		out[i] = map[string]int64{}
		req, err := http.NewRequestWithContext(ctx, "GET", p.HTTP+"/v1/metrics", nil)
		if err != nil {
			continue
		}
		req.Header.Set("X-Auth-Token", admin)
		req.Header.Set("X-Stratus-Token", admin)
		resp, err := hc.Do(req)
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, line := range strings.Split(string(body), "\n") {
			rest, ok := strings.CutPrefix(line, `stratus_raft_index{kind="`)
			if !ok {
				continue
			}
			kind, val, _ := strings.Cut(rest, `"} `)
			if v, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
				out[i][kind] = int64(v)
			}
		}
	}
	return out
}
