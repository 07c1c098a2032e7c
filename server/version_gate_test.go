package server

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// TestRollingUpgradeUsesBatchedEntriesOnlyOnceEveryServerHasThem runs a
// cluster in the middle of a rolling upgrade: one of three servers
// advertises the FSM level from before the batched entries. The leader's
// coalesced creates must then commit as single InstanceCreate entries,
// which every server applies; once that server advertises the new level,
// the same creates share one InstanceCreateBatch entry.
func TestRollingUpgradeUsesBatchedEntriesOnlyOnceEveryServerHasThem(t *testing.T) {
	t.Parallel()
	servers := testCluster3WithOld(t)
	old := servers[2]
	leader := waitForLeader(t, servers...)
	seedFlavors(t, leader)
	registerHost(t, leader, testHost("h1", 64, 65536))
	waitClusterFSMLevel(t, leader, structs.FSMLevelBase)

	// The batched entry itself is refused while a server lacks it.
	entry, err := structs.EncodeEntry(structs.InstanceCreateBatchType, &structs.InstanceCreateBatchEntry{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = leader.raftApply(entry)
	if structs.KindOf(err) != structs.KindUnavailable || !strings.Contains(err.Error(), old.config.NodeName) {
		t.Fatalf("proposing a batched create with %s at %s: got %v, want an unavailable error naming it",
			old.config.NodeName, structs.FSMLevelBase, err)
	}

	const n = 4
	singles, batches := countCreates(leader)
	created := forceCreateBatch(t, leader, "before", n)
	if s, b := countCreates(leader); s-singles != n || b != batches {
		t.Fatalf("with a server at %s, %d queued creates made %d InstanceCreate and %d InstanceCreateBatch entries; want %d and 0",
			structs.FSMLevelBase, n, s-singles, b-batches, n)
	}
	waitInstancesEverywhere(t, servers, created)

	if err := old.setAdvertisedFSMLevel(structs.CurrentFSMLevel); err != nil {
		t.Fatal(err)
	}
	waitClusterFSMLevel(t, leader, structs.CurrentFSMLevel)
	singles, batches = countCreates(leader)
	created = forceCreateBatch(t, leader, "after", n)
	if s, b := countCreates(leader); s != singles || b-batches != 1 {
		t.Fatalf("with every server at %s, %d queued creates made %d InstanceCreate and %d InstanceCreateBatch entries; want 0 and 1",
			structs.CurrentFSMLevel, n, s-singles, b-batches)
	}
	waitInstancesEverywhere(t, servers, created)
}

// TestFSMLevelAdvertisedInGossip checks that a server gossips this
// build's level and that, alone, it may propose the batched entries.
func TestFSMLevelAdvertisedInGossip(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	if got := s.gossip.Local().Meta.FSMLevel; got != int(structs.CurrentFSMLevel) {
		t.Fatalf("a server advertises fsm level %d, want %d", got, structs.CurrentFSMLevel)
	}
	if l, _ := s.ClusterFSMLevel(); l != structs.CurrentFSMLevel {
		t.Fatalf("a lone server's cluster is at %s, want %s", l, structs.CurrentFSMLevel)
	}
	if !s.fsmLevelAllows(structs.AllocClientUpdateBatchType) {
		t.Fatal("a lone server of this build may not propose AllocClientUpdateBatch")
	}
}

// testCluster3WithOld starts three servers; the third advertises the
// baseline FSM level, as a server not upgraded yet.
func testCluster3WithOld(t *testing.T) []*Server {
	t.Helper()
	first := testServer(t, func(c *Config) { c.BootstrapExpect = 3 })
	servers := []*Server{first}
	for i := 1; i < 3; i++ {
		servers = append(servers, testServer(t, func(c *Config) {
			c.BootstrapExpect = 3
			c.Join = []string{first.Gossip().Addr()}
			if i == 2 {
				c.FSMLevel = structs.FSMLevelBase
			}
		}))
	}
	waitForLeader(t, servers...)
	return servers
}

// countCreates returns how many single and batched create entries s has
// proposed.
func countCreates(s *Server) (singles, batches uint64) {
	return s.ProposedEntries(structs.InstanceCreateType), s.ProposedEntries(structs.InstanceCreateBatchType)
}

// waitClusterFSMLevel waits until the leader sees the cluster at want.
func waitClusterFSMLevel(t *testing.T, leader *Server, want structs.FSMLevel) {
	t.Helper()
	waitFor(t, "the cluster at "+want.String(), 60*time.Second, func() error {
		if l, holder := leader.ClusterFSMLevel(); l != want {
			return fmt.Errorf("the leader sees %s (%s)", l, holder)
		}
		return nil
	})
}

// forceCreateBatch sends n creates to the leader while its batcher is
// held busy, so that they all queue, then lets one flusher commit them
// together; it returns the instances' ids.
func forceCreateBatch(t *testing.T, leader *Server, prefix string, n int) []string {
	t.Helper()
	b := &leader.creates
	holdBatcher(b)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		out  []string
		errs []error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var resp structs.InstanceCreateResponse
			err := leader.RPC("Instance.Create", &structs.InstanceCreateRequest{
				Name: fmt.Sprintf("%s-%d", prefix, i), FlavorID: "m1.tiny", ImageID: "cirros", Count: 1}, &resp)
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
			out = append(out, ids(&resp)...)
		}()
	}
	flushWhenQueued(t, leader, b, n, "creates")
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	if len(out) != n {
		t.Fatalf("%d creates made %d instances", n, len(out))
	}
	return out
}

// waitInstancesEverywhere waits until every server's state holds every
// instance in ids.
func waitInstancesEverywhere(t *testing.T, servers []*Server, ids []string) {
	t.Helper()
	waitFor(t, "the instances on every server", 60*time.Second, func() error {
		for _, s := range servers {
			for _, id := range ids {
				inst, err := s.fsm.State().InstanceByID(nil, id)
				if err != nil || inst == nil {
					return fmt.Errorf("%s lacks instance %s: %v", s.config.NodeName, id, err)
				}
			}
		}
		return nil
	})
}

// holdBatcher makes b act as if both its flushers were committing, so
// that every write submitted to it queues.
func holdBatcher[E any, K batchKind[E]](b *applyBatcher[E, K]) {
	b.mu.Lock()
	b.flushers = applyFlushers
	b.mu.Unlock()
}

// flushWhenQueued waits until n writes (what) queue in b, held by
// holdBatcher, and then lets one flusher commit them all.
func flushWhenQueued[E any, K batchKind[E]](t *testing.T, s *Server, b *applyBatcher[E, K], n int, what string) {
	t.Helper()
	waitFor(t, "every one of "+what+" queued", 60*time.Second, func() error {
		b.mu.Lock()
		defer b.mu.Unlock()
		if len(b.queue) != n {
			return fmt.Errorf("%d of %d %s queued", len(b.queue), n, what)
		}
		return nil
	})
	b.mu.Lock()
	b.flushers = 1 // the flusher started below is the other one
	b.mu.Unlock()
	go b.flush(s)
}
