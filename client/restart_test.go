package client

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// TestRestartMidSpawnInterrupted: the driver abandons the spawn when the
// agent shuts down (the fake honours ctx and leaves nothing behind); the
// next agent on the same data dir builds the instance exactly once.
func TestRestartMidSpawnInterrupted(t *testing.T) {
	h := newHarness(t, fake.Config{SpawnLatency: 500 * time.Millisecond})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitFor(t, "the spawn to start", func() bool { return h.fake.Calls("Spawn") == 1 })
	shutdown(t, c)
	if ids := instances(t, h.fake); len(ids) != 0 {
		t.Fatalf("interrupted spawn left %v", ids)
	}
	st, ok, err := openAndRead(t, h.dir, a.ID)
	if err != nil || !ok || st.InstanceID != a.InstanceID || st.Spawned {
		t.Fatalf("local state after an interrupted spawn: %+v %v %v", st, ok, err)
	}

	h.start()
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	if ids := instances(t, h.fake); !reflect.DeepEqual(ids, []string{a.InstanceID}) {
		t.Fatalf("instances %v", ids)
	}
	if n := h.fake.Calls("Spawn"); n != 2 {
		t.Fatalf("%d spawn calls, want the interrupted one and one more", n)
	}
}

// stubbornSpawn is a driver whose Spawn finishes even when the agent's
// context ends, like a backend that cannot abort a build.
type stubbornSpawn struct {
	*fake.Driver
	started atomic.Int32
}

func (d *stubbornSpawn) Spawn(ctx context.Context, spec *virt.InstanceSpec) (*virt.InstanceInfo, error) {
	d.started.Add(1)
	return d.Driver.Spawn(context.WithoutCancel(ctx), spec)
}

// TestRestartMidSpawnCompleted: the spawn completes although the agent
// shut down; the next agent finds the instance and never spawns it again.
func TestRestartMidSpawnCompleted(t *testing.T) {
	h := newHarness(t, fake.Config{SpawnLatency: 300 * time.Millisecond})
	d := &stubbornSpawn{Driver: h.fake}
	h.driver = d
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitFor(t, "the spawn to start", func() bool { return d.started.Load() == 1 })
	shutdown(t, c) // waits for the spawn to come back

	h.start()
	got := waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	if got.PowerState != structs.PowerRunning {
		t.Fatalf("reported %+v", got)
	}
	if ids := instances(t, h.fake); !reflect.DeepEqual(ids, []string{a.InstanceID}) {
		t.Fatalf("instances %v", ids)
	}
	if n := h.fake.Calls("Spawn"); n != 1 {
		t.Fatalf("%d spawn calls, want 1", n)
	}
}

// TestReattachWithoutLocalState: the servers say running, the data dir is
// new, the instance exists: re-attach, never spawn.
func TestReattachAndReapOrphans(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.newClient()
	a := h.srv.addAlloc(c.HostID())
	h.srv.change(a.ID, func(x *structs.Allocation, _ uint64) {
		x.ClientState, x.PowerState = structs.AllocClientRunning, structs.PowerRunning
	})
	ctx := context.Background()
	for _, id := range []string{a.InstanceID, "orphan-1", "orphan-2"} {
		if _, err := h.fake.Spawn(ctx, &virt.InstanceSpec{ID: id, VCPUs: 1, MemoryMB: 64}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the orphans to be reaped", func() bool {
		return reflect.DeepEqual(instances(t, h.fake), []string{a.InstanceID})
	})
	waitFor(t, "re-attachment", func() bool {
		st, _, _ := c.state.getAlloc(a.ID)
		return st.Spawned
	})
	if n := h.fake.Calls("Spawn"); n != 3 {
		t.Fatalf("%d spawn calls, want only the test's 3", n)
	}
	if got := h.srv.alloc(a.ID); got.ClientState != structs.AllocClientRunning {
		t.Fatalf("reported %+v", got)
	}
}

// TestVanishedWhileDown: an allocation removed while the agent was down
// has its instance destroyed and its record dropped at the next start.
func TestVanishedWhileDown(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	allocs := h.srv.addAllocs(c.HostID(), 2)
	for _, a := range allocs {
		waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	}
	shutdown(t, c)
	h.srv.removeAlloc(allocs[0].ID)

	c = h.start()
	waitFor(t, "the vanished allocation's instance to go", func() bool {
		return reflect.DeepEqual(instances(t, h.fake), []string{allocs[1].InstanceID})
	})
	waitFor(t, "its record to go", func() bool {
		_, ok, _ := c.state.getAlloc(allocs[0].ID)
		return !ok
	})
	if n := h.fake.Calls("Spawn"); n != 2 {
		t.Fatalf("%d spawns", n)
	}
}

// TestFailedReportSurvivesRestart: a failure the servers never heard of
// (the agent stopped first) is reported by the next agent, not retried.
func TestFailedReportSurvivesRestart(t *testing.T) {
	h := newHarness(t, fake.Config{})
	h.srv.failNext("Alloc.UpdateFromClient", 1<<30)
	h.fake.FailNext("Spawn", nil)
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitFor(t, "the failure to be recorded", func() bool {
		st, _, _ := c.state.getAlloc(a.ID)
		return st.ClientState == structs.AllocClientFailed
	})
	shutdown(t, c)
	h.srv.mu.Lock()
	h.srv.fail = map[string]int{}
	h.srv.mu.Unlock()

	h.start()
	got := waitState(t, h.srv, a.ID, structs.AllocClientFailed)
	if got.ClientDescription == "" {
		t.Fatalf("reported %+v", got)
	}
	if n := h.fake.Calls("Spawn"); n != 1 {
		t.Fatalf("%d spawns", n)
	}
}

// openAndRead reads one allocation's record from a stopped agent's dir.
func openAndRead(t *testing.T, dir, allocID string) (allocState, bool, error) {
	t.Helper()
	s, err := openState(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	return s.getAlloc(allocID)
}
