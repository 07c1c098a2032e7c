package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

func TestSingleServerBootstrapsAndServes(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	idx := upsertFlavor(t, s, "1")
	var got structs.SingleFlavorResponse
	if err := s.RPC("Flavor.Get", &structs.FlavorSpecificRequest{ID: "f-1"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Flavor == nil || got.Flavor.ID != "1" || got.Index != idx || !got.KnownLeader {
		t.Fatalf("got %+v", got)
	}
	err := s.RPC("Flavor.Get", &structs.FlavorSpecificRequest{ID: "nope"}, &got)
	if structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("missing flavor: %v", err)
	}
	err = s.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{{ID: "2", Name: "x"}}}, &structs.FlavorUpsertResponse{})
	if structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("invalid flavor: %v", err)
	}
}

func TestClusterReplicatesAndSurvivesLeaderLoss(t *testing.T) {
	t.Parallel()
	servers := testCluster(t, 3, nil)
	leader := waitForLeader(t, servers...)
	var followers []*Server
	for _, s := range servers {
		if s != leader {
			followers = append(followers, s)
		}
	}

	// Writes sent to a follower are forwarded and replicated everywhere.
	var acked []string
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("%d", 100+i)
		upsertFlavor(t, followers[i%2], id)
		acked = append(acked, id)
	}
	for _, s := range servers {
		waitFor(t, "replication to "+s.config.NodeName, 10*time.Second, func() error {
			fl, _ := s.fsm.State().Flavors(nil)
			if len(fl) != len(acked) {
				return fmt.Errorf("%d flavors", len(fl))
			}
			return nil
		})
	}

	// A stale read is served locally by a follower.
	var list structs.FlavorListResponse
	if err := followers[0].RPC("Flavor.List", &structs.FlavorListRequest{QueryOptions: structs.QueryOptions{AllowStale: true}}, &list); err != nil || len(list.Flavors) != len(acked) {
		t.Fatalf("stale list: %d %v", len(list.Flavors), err)
	}

	// Kill the leader without leaving: the others elect a new one that
	// has every acknowledged write and accepts new ones.
	if err := leader.Shutdown(); err != nil {
		t.Fatal(err)
	}
	newLeader := waitForLeader(t, followers...)
	acked = append(acked, "200")
	upsertFlavor(t, followers[0], "200")
	for _, s := range followers {
		waitFor(t, "writes after failover on "+s.config.NodeName, 10*time.Second, func() error {
			for _, id := range acked {
				if f, _ := s.fsm.State().FlavorByID(nil, id); f == nil {
					return fmt.Errorf("flavor %s missing", id)
				}
			}
			return nil
		})
	}
	if newLeader == leader {
		t.Fatal("dead server still leads")
	}
}

func TestRestartedServerCatchesUpFromSnapshot(t *testing.T) {
	t.Parallel()
	tweak := func(c *Config) {
		c.SnapshotThreshold = 16
		c.TrailingLogs = 8
	}
	servers := testCluster(t, 3, tweak)
	leader := waitForLeader(t, servers...)
	var victim *Server
	for _, s := range servers {
		if s != leader {
			victim = s
			break
		}
	}
	vcfg := *victim.config
	if err := victim.Shutdown(); err != nil {
		t.Fatal(err)
	}

	// Enough writes that the leader snapshots and truncates its log past
	// what the stopped server has.
	for i := 0; i < 80; i++ {
		upsertFlavor(t, leader, fmt.Sprintf("%d", 1000+i))
	}
	waitFor(t, "leader snapshot", 20*time.Second, func() error {
		if leader.raft.Stats()["last_snapshot_index"] == "0" {
			return fmt.Errorf("no snapshot yet")
		}
		return nil
	})

	// Restart it with the same id and data dir (fresh ports, as after a
	// reboot); it must install the leader's snapshot and catch up.
	vcfg.RPCPort, vcfg.GossipPort = 0, 0
	vcfg.Join = []string{leader.Gossip().Addr()}
	restarted, err := NewServer(&vcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = restarted.Shutdown() })
	waitFor(t, "restarted server to catch up", 30*time.Second, func() error {
		fl, _ := restarted.fsm.State().Flavors(nil)
		if len(fl) != 80 {
			return fmt.Errorf("%d of 80 flavors", len(fl))
		}
		// Raft records the installed snapshot just after the FSM
		// restored it, so wait for both.
		if restarted.raft.Stats()["last_snapshot_index"] == "0" {
			return fmt.Errorf("no snapshot installed")
		}
		return nil
	})
}

func TestLeftServerIsRemovedFromRaft(t *testing.T) {
	t.Parallel()
	servers := testCluster(t, 3, nil)
	leader := waitForLeader(t, servers...)
	var leaving *Server
	for _, s := range servers {
		if s != leader {
			leaving = s
			break
		}
	}
	if err := leaving.Leave(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	_ = leaving.Shutdown()
	waitFor(t, "peer removal", 20*time.Second, func() error {
		var resp structs.RaftConfigurationResponse
		if err := leader.RPC("Operator.RaftGetConfiguration", &structs.GenericRequest{}, &resp); err != nil {
			return err
		}
		if len(resp.Servers) != 2 {
			return fmt.Errorf("%d peers", len(resp.Servers))
		}
		return nil
	})
}

// TestServersStartInAnyOrder starts a server that joins an address where
// nobody listens yet; it keeps retrying, and the cluster forms once the
// other servers come up there.
func TestServersStartInAnyOrder(t *testing.T) {
	t.Parallel()
	// Reserve a gossip port for the server that starts last.
	probe := testServer(t, func(c *Config) { c.BootstrapExpect = 0 })
	port := probe.Gossip().BindPort()
	_ = probe.Shutdown()

	early := testServer(t, func(c *Config) {
		c.BootstrapExpect = 2
		c.Join = []string{fmt.Sprintf("127.0.0.1:%d", port)}
	})
	late := testServer(t, func(c *Config) {
		c.BootstrapExpect = 2
		c.GossipPort = port
	})
	waitForLeader(t, early, late)
}
