package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkFailover SIGKILLs the leader of a 3-server cluster of real
// agent processes and measures the time until a survivor accepts a write
// again, over STRATUS_FAILOVER_RUNS runs (default 10; 1 with
// STRATUS_BENCH_SMALL). After each run the killed server restarts from
// its data dir and rejoins. Every write acknowledged before a kill is
// checked to survive it. "idle" has no other traffic; "load" keeps 8
// clients writing flavors to every server throughout.
func BenchmarkFailover(b *testing.B) {
	b.Run("idle", func(b *testing.B) { benchFailover(b, false) })
	b.Run("load", func(b *testing.B) { benchFailover(b, true) })
}

func benchFailover(b *testing.B, load bool) {
	runs := 10
	if benchSmall() {
		runs = 1
	}
	if v, err := strconv.Atoi(os.Getenv("STRATUS_FAILOVER_RUNS")); err == nil && v > 0 {
		runs = v
	}
	s1 := startAgent(b, "s1", "--server", "--bootstrap-expect", "3", "--log-level", "warn")
	s2 := startAgent(b, "s2", "--server", "--bootstrap-expect", "3", "--log-level", "warn", "--join", s1.gossip)
	s3 := startAgent(b, "s3", "--server", "--bootstrap-expect", "3", "--log-level", "warn", "--join", s1.gossip)
	procs := &procSet{procs: []*agentProc{s1, s2, s3}}
	client := &http.Client{Timeout: 2 * time.Second}
	var loaded atomic.Int64
	if load {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				c := loadClient(w)
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					p := procs.get()[(w+n)%3]
					wait, err := loadFlavor(c, p.http, w, n)
					if err == nil {
						loaded.Add(1)
					}
					if wait > 0 {
						select {
						case <-stop:
							return
						case <-time.After(wait):
						}
					}
				}
			}(w)
		}
		b.Cleanup(func() { close(stop); wg.Wait() })
	}

	var samples []time.Duration
	written := 0
	for i := 0; i < b.N; i++ {
		for run := 0; run < runs; run++ {
			all := procs.get()
			leader := waitForStableLeader(b, all)
			// An acknowledged write just before the kill.
			written++
			if err := createFlavor(client, leader.http, written); err != nil {
				b.Fatalf("write before kill: %v", err)
			}
			var survivor *agentProc
			for _, p := range all {
				if p != leader {
					survivor = p
					break
				}
			}
			leader.kill()
			start := time.Now()
			written++
			for {
				if err := createFlavor(client, survivor.http, written); err == nil {
					break
				}
				if time.Since(start) > 30*time.Second {
					b.Fatalf("no write accepted 30 s after the leader was killed")
				}
				time.Sleep(5 * time.Millisecond)
			}
			samples = append(samples, time.Since(start))
			checkFlavors(b, client, survivor.http, written)

			// Restart the killed server from its data dir.
			restarted := startAgentIn(b, leader.name, leader.dataDir, "--server", "--bootstrap-expect", "3",
				"--log-level", "warn", "--join", survivor.gossip)
			procs.replace(leader, restarted)
		}
	}
	b.StopTimer()
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	pct := func(p float64) time.Duration { return samples[int(p*float64(len(samples)-1)+0.5)] }
	b.ReportMetric(pct(0.5).Seconds(), "p50-s")
	b.ReportMetric(pct(0.99).Seconds(), "p99-s")
	b.ReportMetric(samples[len(samples)-1].Seconds(), "max-s")
	b.Logf("failover over %d runs (load %v, %d background writes): p50 %v, p99 %v, min %v, max %v",
		len(samples), load, loaded.Load(), pct(0.5), pct(0.99), samples[0], samples[len(samples)-1])
}

// procSet is the cluster's current processes, read by load writers
// while the benchmark replaces a killed one.
type procSet struct {
	mu    sync.Mutex
	procs []*agentProc
}

func (s *procSet) get() []*agentProc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*agentProc(nil), s.procs...)
}

func (s *procSet) replace(old, new *agentProc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, p := range s.procs {
		if p == old {
			s.procs[k] = new
		}
	}
}

// loadClient is background writer w's HTTP client. Each writer
// connects from its own loopback address (127.0.0.10+w), as separate
// clients would: the API rate-limits an anonymous caller by address, and
// eight writers sharing the benchmark's own address would use up its
// allowance and have its measured writes refused with 429.
func loadClient(w int) *http.Client {
	d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(10+w))}}
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// loadFlavor writes background flavor n of writer w. When the API
// rate-limits it, it returns how long to wait (Retry-After), as a well
// behaved client waits.
func loadFlavor(c *http.Client, addr string, w, n int) (time.Duration, error) {
	body := fmt.Sprintf(`{"ID":"ld-%d-%d","Name":"ld-%d-%d","VCPUs":1,"MemoryMB":64}`, w, n, w, n)
	resp, err := c.Post(addr+"/v1/flavors", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode == http.StatusTooManyRequests {
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return time.Duration(max(secs, 0))*time.Second + 10*time.Millisecond, fmt.Errorf("status %d", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	return 0, nil
}

func createFlavor(c *http.Client, addr string, n int) error {
	body := fmt.Sprintf(`{"ID":"fo-%d","Name":"fo-%d","VCPUs":1,"MemoryMB":64}`, n, n)
	resp, err := c.Post(addr+"/v1/flavors", "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusConflict {
		return nil // an earlier attempt committed but its answer was lost
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func checkFlavors(b *testing.B, c *http.Client, addr string, upTo int) {
	for n := 1; n <= upTo; n++ {
		resp, err := c.Get(fmt.Sprintf("%s/v1/flavors/fo-%d", addr, n))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("acknowledged flavor fo-%d lost (status %d)", n, resp.StatusCode)
		}
	}
}

// waitForStableLeader waits until all three servers are voters and agree
// on a leader, and returns the leader's process.
func waitForStableLeader(b *testing.B, procs []*agentProc) *agentProc {
	var leader *agentProc
	eventually(b, "three voters and a leader", 60*time.Second, func() error {
		leader = nil
		var first string
		for _, p := range procs {
			out, errOut, code := cli(b, p.http, "operator", "raft", "list-peers", "-stale")
			if code != 0 {
				return fmt.Errorf("%s: %s", p.name, errOut)
			}
			if strings.Count(out, "true") < 3 {
				return fmt.Errorf("%s sees fewer than 3 voters:\n%s", p.name, out)
			}
			if first == "" {
				first = out
			} else if out != first {
				return fmt.Errorf("servers disagree")
			}
		}
		for _, p := range procs {
			for _, line := range strings.Split(first, "\n") {
				if strings.Contains(line, p.rpc) && strings.Contains(line, "leader") {
					leader = p
				}
			}
		}
		if leader == nil {
			return fmt.Errorf("no leader")
		}
		return nil
	})
	return leader
}
