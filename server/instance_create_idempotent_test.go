package server

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// TestCreatesAcrossLeaderChangesHappenExactlyOnce boots instances from
// several clients through any of three servers (real Raft over TCP on
// loopback) while the leader is stepped down twice and then killed.
// Each client retries as the agent does — same idempotency key, on
// errors that mean no leader or a lost connection — until its create is
// acknowledged. At the end every acknowledged create exists exactly
// once, with the id its answer gave, and no instance exists that no
// answer named: a commit whose answer was lost was answered by the
// retry instead of being made again.
func TestCreatesAcrossLeaderChangesHappenExactlyOnce(t *testing.T) {
	servers := testCluster(t, 3, nil)
	upsertFlavor(t, servers[0], "1")
	k, rest := writeAcrossLeaderChanges(t, servers, 6, "creates", func(k *keyedWrites, w, n int) error {
		key := fmt.Sprintf("w%d-%d", w, n)
		args := structs.InstanceCreateRequest{Name: key, FlavorID: "1", ImageID: "img", NetworksMode: structs.NetworksNone,
			IdempotencyKey: key}
		var out structs.InstanceCreateResponse
		err := k.call("Instance.Create", func() any { return &args }, &out)
		if err != nil || len(out.Instances) != 1 {
			return fmt.Errorf("create %s: %v (%d instances)", key, err, len(out.Instances))
		}
		k.acked.Store(key, out.Instances[0].ID)
		return nil
	})

	// Every server still up converges to the same state; check one.
	s := rest[0]
	if err := s.raft.Barrier(60 * time.Second).Error(); err != nil && s.IsLeader() {
		t.Fatal(err)
	}
	checkExactlyOnce(t, waitForLeader(t, rest...), &k.acked)
}

// checkExactlyOnce checks the leader's instances against the
// acknowledged creates: one instance per key, the one its answer named,
// and nothing else.
func checkExactlyOnce(t *testing.T, leader *Server, acked *sync.Map) {
	t.Helper()
	insts, err := leader.fsm.State().Instances(nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]string{}
	for _, inst := range insts {
		byName[inst.Name] = append(byName[inst.Name], inst.ID)
	}
	n := 0
	acked.Range(func(k, v any) bool {
		n++
		ids := byName[k.(string)]
		if len(ids) != 1 || ids[0] != v.(string) {
			t.Errorf("create %s acknowledged as %s; the state holds %v", k, v, ids)
		}
		delete(byName, k.(string))
		return true
	})
	for name, ids := range byName {
		t.Errorf("instances %v (%s) exist that no acknowledged create named", ids, name)
	}
	if len(insts) != n {
		t.Errorf("%d instances for %d acknowledged creates", len(insts), n)
	}
}

func TestCreateWithAKeyIsAnsweredAgainAndPurged(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	upsertFlavor(t, s, "1")
	args := structs.InstanceCreateRequest{Name: "web", FlavorID: "1", ImageID: "img", NetworksMode: structs.NetworksNone,
		Count: 2, ProjectID: "p1", IdempotencyKey: "k"}
	var first, again structs.InstanceCreateResponse
	if err := s.RPC("Instance.Create", &args, &first); err != nil {
		t.Fatal(err)
	}
	if err := s.RPC("Instance.Create", &args, &again); err != nil {
		t.Fatal(err)
	}
	if len(again.Instances) != 2 || again.Instances[0].ID != first.Instances[0].ID || again.Instances[1].ID != first.Instances[1].ID ||
		again.EvalID != first.EvalID || again.Index != first.Index {
		t.Fatalf("the retry answered %+v, want the first create's %+v", again, first)
	}
	// Another project's key is another create; the same key for another
	// request is a conflict.
	other := args
	other.ProjectID = "p2"
	if err := s.RPC("Instance.Create", &other, &structs.InstanceCreateResponse{}); err != nil {
		t.Fatal(err)
	}
	changed := args
	changed.Name = "db"
	if err := s.RPC("Instance.Create", &changed, &structs.InstanceCreateResponse{}); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("a reused key answered %v, want a conflict", err)
	}
	bad := args
	bad.IdempotencyKey = "a\x00b"
	if err := s.RPC("Instance.Create", &bad, &structs.InstanceCreateResponse{}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("a key with a control character answered %v", err)
	}
	insts, _ := s.fsm.State().Instances(nil)
	if len(insts) != 4 {
		t.Fatalf("%d instances, want 4", len(insts))
	}

	// The leader's purge only proposes once a record is older than the
	// TTL, and then removes every old one.
	checkIdempotencyPurge(t, s, "create_requests", func() int {
		recs, _ := s.fsm.State().CreateRequests(nil)
		return len(recs)
	})
}

func TestLeaderReapsOnlyOldFinishedEvaluations(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	now := time.Now()
	old := now.Add(-structs.EvalGCThreshold - time.Minute).UnixNano()
	if _, err := s.apply(structs.EvalUpdateType, &structs.EvalUpdateEntry{Evals: []*structs.Evaluation{
		{ID: "old-done", Status: structs.EvalStatusComplete, CreatedAt: old},
		{ID: "old-pending", Status: structs.EvalStatusPending, CreatedAt: old},
		{ID: "new-done", Status: structs.EvalStatusComplete, CreatedAt: now.UnixNano()},
	}}); err != nil {
		t.Fatal(err)
	}
	if err := s.reapEvals(now); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"old-done": false, "old-pending": true, "new-done": true} {
		if ev, _ := s.fsm.State().EvalByID(nil, id); (ev != nil) != want {
			t.Errorf("evaluation %s kept: %v, want %v", id, ev != nil, want)
		}
	}
	// Nothing old is left: no entry is proposed.
	idx := s.fsm.State().Index("evals")
	if err := s.reapEvals(now); err != nil {
		t.Fatal(err)
	}
	if got := s.fsm.State().Index("evals"); got != idx {
		t.Fatalf("a reap with nothing to do wrote index %d", got)
	}
}
