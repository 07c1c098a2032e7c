package server

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// runningInstances boots n instances on one big host and reports them
// running, so that power tasks apply to them.
func runningInstances(t *testing.T, s *Server, n int) []string {
	t.Helper()
	seedFlavors(t, s)
	registerHost(t, s, testHost("h1", 512, 1<<20))
	resp := createInstances(t, s, "vm", "m1.tiny", n)
	list := ids(resp)
	waitSettled(t, s, list)
	var allocs structs.AllocListResponse
	if err := s.RPC("Alloc.List", &structs.AllocListRequest{HostID: "h1"}, &allocs); err != nil || len(allocs.Allocs) != n {
		t.Fatalf("allocs %d, %v", len(allocs.Allocs), err)
	}
	var updates []*structs.AllocClientUpdate
	for _, a := range allocs.Allocs {
		updates = append(updates, &structs.AllocClientUpdate{AllocID: a.ID, ClientState: structs.AllocClientRunning, PowerState: structs.PowerRunning})
	}
	if err := s.RPC("Alloc.UpdateFromClient", &structs.AllocUpdateRequest{HostID: "h1", Updates: updates}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	return list
}

// TestTasksAcrossLeaderChangesStartExactlyOnce submits tasks from several
// clients through any of three servers (real Raft over TCP on loopback)
// while the leader is stepped down twice and then killed. Each client
// retries as the agent does — same idempotency key, a fresh request id
// per attempt as over HTTP, on errors that mean no leader or a lost
// connection — until its task is acknowledged. Every instance is stopped
// once (a stop started twice is a conflict with itself) and then locked
// and unlocked in turn (applied twice, they would leave two actions). At
// the end no client saw a refusal, and every acknowledged task has
// exactly one instance action, the one its answer named, and no action
// exists that no answer named.
func TestTasksAcrossLeaderChangesStartExactlyOnce(t *testing.T) {
	servers := testCluster(t, 3, func(c *Config) { c.HeartbeatTTL = time.Hour })
	const workers, perWorker = 6, 8
	insts := runningInstances(t, waitForLeader(t, servers...), workers*perWorker)
	k, rest := writeAcrossLeaderChanges(t, servers, workers, "tasks", func(k *keyedWrites, w, n int) error {
		mine := insts[w*perWorker : (w+1)*perWorker]
		id, op := mine[n%perWorker], structs.OpStop
		if round := n / perWorker; round > 0 {
			op = []string{structs.OpLock, structs.OpUnlock}[(round-1)%2]
		}
		key := fmt.Sprintf("w%d-%d", w, n)
		var out structs.InstanceTaskResponse
		err := k.call("Instance.Task", func() any {
			return &structs.InstanceTaskRequest{InstanceID: id, Op: op, Admin: true, ProjectID: "p1", IdempotencyKey: key}
		}, &out)
		if err != nil || out.RequestID == "" {
			return fmt.Errorf("%s of %s (key %s): %v (request %q)", op, id, key, err, out.RequestID)
		}
		if _, dup := k.acked.LoadOrStore(out.RequestID, id); dup {
			return fmt.Errorf("two submissions answered with action %s", out.RequestID)
		}
		return nil
	})
	checkTasksOnce(t, waitForLeader(t, rest...), insts, &k.acked)
}

// checkTasksOnce checks the leader's instance actions against the
// acknowledged tasks: one action per acknowledged request id, on its
// instance, and no other action than the instances' creates.
func checkTasksOnce(t *testing.T, leader *Server, insts []string, acked *sync.Map) {
	t.Helper()
	state := leader.fsm.State()
	seen := map[string]bool{}
	for _, id := range insts {
		actions, err := state.InstanceActions(nil, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range actions {
			if a.Action == "create" {
				continue
			}
			if inst, ok := acked.Load(a.RequestID); !ok || inst.(string) != id {
				t.Errorf("instance %s has a %s action %s that no acknowledged task named", id, a.Action, a.RequestID)
			}
			seen[a.RequestID] = true
		}
	}
	acked.Range(func(k, v any) bool {
		if !seen[k.(string)] {
			t.Errorf("acknowledged task %s on %s left no action", k, v)
		}
		return true
	})
}

func TestTaskWithAKeyIsAnsweredAgainAndPurged(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	id := runningInstances(t, s, 1)[0]
	task := func(args structs.InstanceTaskRequest) (*structs.InstanceTaskResponse, error) {
		var out structs.InstanceTaskResponse
		return &out, s.RPC("Instance.Task", &args, &out)
	}
	args := structs.InstanceTaskRequest{InstanceID: id, Op: structs.OpStop, ProjectID: "p1", Admin: true, IdempotencyKey: "k"}
	first, err := task(args)
	if err != nil {
		t.Fatal(err)
	}
	again, err := task(args)
	if err != nil || again.RequestID != first.RequestID || again.Index != first.Index || again.Instance == nil {
		t.Fatalf("the retry answered %+v (%v), want the first stop's %+v", again, err, first)
	}
	// Without the key a second stop is refused: the instance is stopping.
	plain := args
	plain.IdempotencyKey = ""
	if _, err := task(plain); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("an unkeyed second stop answered %v", err)
	}
	// The same key for another task is a conflict; another project's key
	// is its own.
	changed := args
	changed.Op = structs.OpLock
	if _, err := task(changed); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("a reused key answered %v, want a conflict", err)
	}
	changed.ProjectID = "p2"
	if _, err := task(changed); err != nil {
		t.Fatalf("another project's key: %v", err)
	}
	bad := args
	bad.IdempotencyKey = "a\x00b"
	if _, err := task(bad); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("a key with a control character answered %v", err)
	}
	// The FSM recognises the key too when the leader's own check cannot
	// (an earlier attempt still in flight): the entry is answered with
	// the first task.
	entry, err := s.buildTask(&plain)
	if err != nil {
		t.Fatal(err)
	}
	entry.Idempotency = taskIdempotency(&args)
	var replay structs.InstanceTaskResponse
	if err := s.applyTask(entry, &replay); err != nil || replay.RequestID != first.RequestID {
		t.Fatalf("a racing retry answered %+v (%v)", replay, err)
	}

	// The create requests' purge removes old task records too.
	if recs, _ := s.fsm.State().TaskRequests(nil); len(recs) != 2 {
		t.Fatalf("%d task records, want 2", len(recs))
	}
	checkIdempotencyPurge(t, s, "task_requests", func() int {
		recs, _ := s.fsm.State().TaskRequests(nil)
		return len(recs)
	})
}
