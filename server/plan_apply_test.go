package server

import (
	"fmt"
	"testing"
	"time"
)

// A leader lost while plans are being applied must not wedge anything:
// creates sent again (with their idempotency keys) are answered, every
// evaluation finishes under the next leader, every instance gets a host,
// and no host ends up overcommitted or with usage that disagrees with
// its allocations, on any server.
func TestPlacementSurvivesLeaderChanges(t *testing.T) {
	t.Parallel()
	pb := &placementBench{perRequest: 20, requests: 30}
	pb.servers = testCluster(t, 3, func(c *Config) {
		c.HeartbeatTTL = time.Hour
		c.EvalNackTimeout = 20 * time.Second
	})
	pb.seedFlavors(t)
	pb.registerHosts(t, 30) // room for 64 m1.tiny each: 1,920
	transfers := make(chan error, 2)
	pb.afterCreate = func(created int64) {
		if created != 5 && created != 15 {
			return
		}
		// Off the client's goroutine: the other clients keep creating
		// while the leadership moves.
		go func() {
			l := pb.leader()
			if l == nil {
				transfers <- fmt.Errorf("no leader to move at create %d", created)
				return
			}
			transfers <- l.raft.LeadershipTransfer().Error()
		}()
	}
	all, evals, err := pb.round(0)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case err := <-transfers:
			if err != nil {
				t.Logf("leadership transfer: %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("leadership transfer did not finish within a minute")
		}
	}
	pb.waitEvalsDone(t, evals)
	if placed := pb.countPlaced(t, all); placed != len(all) || len(all) != pb.perRequest*pb.requests {
		t.Fatalf("%d of %d instances placed, %d wanted", placed, len(all), pb.perRequest*pb.requests)
	}
	waitFor(t, "every server to apply the last placements", time.Minute, func() error {
		for _, s := range pb.servers {
			if err := checkUsage(s); err != nil {
				return err
			}
		}
		return nil
	})
	pb.checkNoOvercommit(t)
	waitFor(t, "the broker to hold nothing", time.Minute, func() error {
		l := pb.leader()
		if l == nil {
			return fmt.Errorf("no leader")
		}
		if ready, unacked := l.evalBroker.Stats(); ready+unacked > 0 {
			return fmt.Errorf("%d ready, %d unacked", ready, unacked)
		}
		return nil
	})
	t.Logf("%d creates sent again", pb.retries.Load())
}
