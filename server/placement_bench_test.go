package server

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// BenchmarkClusterPlacement places instances on simulated hosts through
// the whole server path — Instance.Create over RPC, Raft, the eval
// broker, scheduler workers on all three servers, the plan applier — and
// then checks that no host is overcommitted. Requests carry 100
// instances each, as Nova's multi-create does. It reports placements/s.
func BenchmarkClusterPlacement(b *testing.B) {
	// servers=3 is the real thing. servers=1 shows what the same path
	// reaches when one process does not have to apply every entry three
	// times on the machine's two cores.
	for _, n := range []int{3, 1} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) { benchPlacement(b, n) })
	}
}

func benchPlacement(b *testing.B, numServers int) {
	const (
		hosts       = 1000
		perRequest  = 100
		requests    = 100 // 10,000 instances per round
		concurrency = 16
	)
	servers := testCluster(b, numServers, func(c *Config) {
		c.Logger = hclog.NewNullLogger()
		c.HeartbeatTTL = time.Hour
	})
	leader := waitForLeader(b, servers...)
	seedFlavors(b, leader)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := 0; i < hosts; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			// 16 cores × ratio 4 and 64 GiB: room for 64 m1.tiny.
			h := testHost(fmt.Sprintf("sim-%05d", i), 16, 65536)
			h.Inventories[structs.ResourceVCPU].AllocationRatio = 4
			registerHost(b, servers[i%numServers], h)
		}(i)
	}
	wg.Wait()
	b.ResetTimer()
	var placed int
	var elapsed time.Duration
	for n := 0; n < b.N; n++ {
		start := time.Now()
		var mu sync.Mutex
		var all, evals []string
		work := make(chan int)
		for w := 0; w < concurrency; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for r := range work {
					resp := createInstances(b, servers[(w+r)%numServers], fmt.Sprintf("b%d-%d", n, r), "m1.tiny", perRequest)
					mu.Lock()
					all = append(all, ids(resp)...)
					evals = append(evals, resp.EvalID)
					mu.Unlock()
				}
			}(w)
		}
		for r := 0; r < requests; r++ {
			work <- r
		}
		close(work)
		wg.Wait()
		waitEvalsDone(b, leader, evals)
		elapsed += time.Since(start)
		placed += countPlaced(b, leader, all)
	}
	b.StopTimer()
	b.ReportMetric(float64(placed)/elapsed.Seconds(), "placements/s")
	checkNoOvercommit(b, leader)
}

// waitEvalsDone waits until every evaluation is complete or failed: then
// each of its instances has a host or a NoValidHost fault. Polling the
// evaluations, not the 10,000 instances, keeps the observer cheap.
func waitEvalsDone(b *testing.B, s *Server, evals []string) {
	waitFor(b, "all evaluations", 10*time.Minute, func() error {
		for _, id := range evals {
			ev, err := s.fsm.State().EvalByID(nil, id)
			if err != nil {
				return err
			}
			if ev == nil || !ev.Terminal() {
				return fmt.Errorf("evaluation %s pending", id)
			}
		}
		return nil
	})
}

// countPlaced counts the instances that got a host, and fails the
// benchmark if any is still waiting for one.
func countPlaced(b *testing.B, s *Server, ids []string) int {
	placed := 0
	for _, id := range ids {
		inst, err := s.fsm.State().InstanceByID(nil, id)
		if err != nil || inst == nil {
			b.Fatalf("instance %s: %v", id, err)
		}
		switch {
		case inst.HostID != "":
			placed++
		case inst.VMState == structs.VMStateBuilding:
			b.Fatalf("instance %s still scheduling after its evaluation finished", id)
		}
	}
	return placed
}

func checkNoOvercommit(b *testing.B, s *Server) {
	hosts, err := s.fsm.State().Hosts(nil)
	if err != nil {
		b.Fatal(err)
	}
	allocs, _ := s.fsm.State().Allocations(nil)
	used := map[string]map[string]int64{}
	for _, a := range allocs {
		if a.Terminal() {
			continue
		}
		if used[a.HostID] == nil {
			used[a.HostID] = map[string]int64{}
		}
		for c, n := range a.Resources {
			used[a.HostID][c] += n
		}
	}
	for _, h := range hosts {
		for class, inv := range h.Inventories {
			if used[h.ID][class] > inv.Capacity() {
				b.Fatalf("host %s overcommitted on %s: %d > %d", h.ID, class, used[h.ID][class], inv.Capacity())
			}
			if used[h.ID][class] != h.Usage[class] {
				b.Fatalf("host %s usage %d disagrees with its allocations %d on %s", h.ID, h.Usage[class], used[h.ID][class], class)
			}
		}
	}
}
