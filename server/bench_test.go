package server

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// benchCluster starts a 3-server loopback cluster with quiet logs;
// noSync turns off bbolt's fsync of the Raft log.
func benchCluster(b *testing.B, noSync bool) *Server {
	b.Helper()
	servers := testCluster(b, 3, func(c *Config) {
		c.Logger = hclog.NewNullLogger()
		c.raftNoSync = noSync
	})
	return waitForLeader(b, servers...)
}

// BenchmarkRaftCommit measures committed writes per second on a 3-server
// loopback cluster: "sequential" has one write in flight (each pays a
// full replication round trip and an fsync); "concurrent" has 64, which
// Raft batches into shared log appends and fsyncs. The "nosync" runs
// are the same with raft-boltdb's NoSync, to show what the fsync costs
// (never a production setting: an acknowledged write could be lost).
func BenchmarkRaftCommit(b *testing.B) {
	for _, c := range []struct {
		inflight int
		noSync   bool
	}{{1, false}, {64, false}, {1, true}, {64, true}} {
		name := "sequential"
		if c.inflight > 1 {
			name = fmt.Sprintf("concurrent-%d", c.inflight)
		}
		if c.noSync {
			name += "-nosync"
		}
		inflight := c.inflight
		b.Run(name, func(b *testing.B) {
			leader := benchCluster(b, c.noSync)
			var next atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, inflight)
			b.ResetTimer()
			start := time.Now()
			for w := 0; w < inflight; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						id := fmt.Sprintf("%d", i)
						var resp structs.FlavorUpsertResponse
						err := leader.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{
							{ID: id, Name: "b" + id, VCPUs: 1, MemoryMB: 64, RxTxFactor: 1},
						}}, &resp)
						if err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			close(errs)
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "writes/s")
		})
	}
}
