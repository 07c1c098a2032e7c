package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// bootAndDelete creates one instance per name (no scheduler runs, so
// none is placed) and deletes those named in del; it returns the ids by
// name.
func bootAndDelete(t *testing.T, s *Server, names []string, del map[string]bool) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, name := range names {
		var out structs.InstanceCreateResponse
		err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: name, FlavorID: "1", ImageID: "img",
			NetworksMode: structs.NetworksNone, Count: 1, ProjectID: "p1", UserID: "u1", RequestID: "req-" + name}, &out)
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		ids[name] = out.Instances[0].ID
	}
	for _, name := range names {
		if !del[name] {
			continue
		}
		err := s.RPC("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{ids[name]}, ProjectID: "p1",
			UserID: "u1", RequestID: "req-del-" + name}, &structs.GenericResponse{})
		if err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
	}
	waitFor(t, "the deletes to purge the instances", 60*time.Second, func() error {
		for name, id := range ids {
			if inst, _ := s.fsm.State().InstanceByID(nil, id); del[name] && inst != nil {
				return fmt.Errorf("%s still exists", name)
			}
		}
		return nil
	})
	return ids
}

func actionCount(t *testing.T, s *Server, id string) int {
	t.Helper()
	acts, err := s.fsm.State().InstanceActions(nil, id)
	if err != nil {
		t.Fatal(err)
	}
	return len(acts)
}

func TestLeaderPurgesDeletedRecordsPastTheRetention(t *testing.T) {
	s := testServer(t, func(c *Config) {
		c.NumSchedulers = -1
		c.DeletedRetention = 2 * time.Second
	})
	waitForLeader(t, s)
	upsertFlavor(t, s, "1")
	ids := bootAndDelete(t, s, []string{"gone", "live"}, map[string]bool{"gone": true})
	if n := actionCount(t, s, ids["gone"]); n != 2 {
		t.Fatalf("the deleted server has %d actions, want create and delete", n)
	}
	// The leader's duty (every second with this retention) purges the
	// deleted server's records once they are older than 2s.
	waitFor(t, "the leader to purge the deleted server's records", 90*time.Second, func() error {
		if n := actionCount(t, s, ids["gone"]); n != 0 {
			return fmt.Errorf("%d actions left", n)
		}
		if us, _ := s.fsm.State().DeletedUsages(nil, ""); len(us) != 0 {
			return fmt.Errorf("%d usage records left", len(us))
		}
		return nil
	})
	if n := actionCount(t, s, ids["live"]); n != 1 {
		t.Fatalf("the live server has %d actions, want its create", n)
	}
	if inst, _ := s.fsm.State().InstanceByID(nil, ids["live"]); inst == nil {
		t.Fatal("the live server was purged")
	}
}

func TestOperatorPurgeDeletedWithRetentionForever(t *testing.T) {
	s := testServer(t, func(c *Config) {
		c.NumSchedulers = -1
		c.DeletedRetention = -1
	})
	waitForLeader(t, s)
	upsertFlavor(t, s, "1")
	ids := bootAndDelete(t, s, []string{"a", "b"}, map[string]bool{"a": true, "b": true})

	// Forever: the leader's duty proposes nothing, whenever it runs.
	idx := s.fsm.State().Index("instance_usages")
	if err := s.purgeDeleted(time.Now().Add(1000 * time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := s.fsm.State().Index("instance_usages"); got != idx {
		t.Fatalf("a forever retention purged at index %d", got)
	}

	var out structs.DeletedPurgeResponse
	if err := s.RPC("Operator.PurgeDeleted", &structs.DeletedPurgeRequest{}, &out); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("a purge without a cut-off answered %v", err)
	}
	// A cut-off before the deletions purges nothing and writes nothing.
	if err := s.RPC("Operator.PurgeDeleted", &structs.DeletedPurgeRequest{Before: time.Now().Add(-time.Hour).UnixNano()}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Purged != 0 || out.Entries != 0 || s.fsm.State().Index("instance_usages") != idx {
		t.Fatalf("an early cut-off answered %+v", out)
	}
	if err := s.RPC("Operator.PurgeDeleted", &structs.DeletedPurgeRequest{Before: time.Now().Add(time.Second).UnixNano()}, &out); err != nil {
		t.Fatal(err)
	}
	if out.Purged != 2 || out.Entries != 1 || out.Index == 0 {
		t.Fatalf("purge answered %+v, want 2 instances in 1 entry", out)
	}
	for _, id := range ids {
		if n := actionCount(t, s, id); n != 0 {
			t.Fatalf("%s kept %d actions", id, n)
		}
	}
}

func TestStatePurgeIntervalFollowsAShortRetention(t *testing.T) {
	for retention, want := range map[time.Duration]time.Duration{
		-1: statePurgeInterval, 24 * time.Hour: statePurgeInterval, 10 * time.Second: 5 * time.Second,
		time.Second: time.Second, 90 * time.Second: 45 * time.Second,
	} {
		if got := statePurgeEvery(retention, time.Hour, time.Hour); got != want {
			t.Errorf("retention %s: every %s, want %s", retention, got, want)
		}
	}
}
