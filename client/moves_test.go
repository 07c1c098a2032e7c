package client

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// failedOrGone matches a report that the instance failed or vanished.
func failedOrGone(u structs.AllocClientUpdate) bool {
	return u.ClientState == structs.AllocClientFailed || u.ClientDescription == msgDisappeared
}

// TestRebuild: the instance is destroyed and spawned again from its new
// image, with no spawning report; a stopped instance ends stopped; a
// failed spawn fails the allocation with the action's error.
func TestRebuild(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	before := len(h.srv.reports(a.ID))

	h.srv.setImage(a.InstanceID, "ubuntu")
	seq := h.srv.action(a.ID, structs.ActionRebuild, "")
	got := waitAction(t, h.srv, a.ID, seq)
	if got.ClientState != structs.AllocClientRunning || got.PowerState != virt.PowerRunning || got.ActionError != "" {
		t.Fatalf("rebuild: reported %+v", got)
	}
	if spec, _ := h.fake.Spec(a.InstanceID); spec == nil || spec.ImageID != "ubuntu" || spec.VCPUs != 2 {
		t.Fatalf("rebuilt spec %+v", spec)
	}
	if h.fake.Calls("Spawn") != 2 || h.fake.Calls("Destroy") != 1 {
		t.Fatalf("%d Spawn and %d Destroy calls, want 2 and 1", h.fake.Calls("Spawn"), h.fake.Calls("Destroy"))
	}
	for _, u := range h.srv.reports(a.ID)[before:] {
		if u.ClientState != structs.AllocClientRunning {
			t.Fatalf("report during the rebuild: %+v", u)
		}
	}

	// A stopped instance is rebuilt and stays stopped.
	h.srv.setDesired(a.ID, structs.AllocDesiredStopped)
	waitState(t, h.srv, a.ID, structs.AllocClientStopped)
	h.srv.setImage(a.InstanceID, "fedora")
	seq = h.srv.action(a.ID, structs.ActionRebuild, "")
	got = waitAction(t, h.srv, a.ID, seq)
	if got.ClientState != structs.AllocClientStopped || got.PowerState != virt.PowerShutdown || got.ActionError != "" {
		t.Fatalf("rebuild of a stopped instance: reported %+v", got)
	}
	if spec, _ := h.fake.Spec(a.InstanceID); spec.ImageID != "fedora" || power(h.fake, a.InstanceID) != virt.PowerShutdown {
		t.Fatalf("rebuilt stopped instance: image %q, power %d", spec.ImageID, power(h.fake, a.InstanceID))
	}

	// A spawn that fails leaves no instance: the allocation fails.
	h.srv.setDesired(a.ID, structs.AllocDesiredRunning)
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	h.fake.FailNext("Spawn", errors.New("image not found"))
	seq = h.srv.action(a.ID, structs.ActionRebuild, "")
	got = waitState(t, h.srv, a.ID, structs.AllocClientFailed)
	if got.ActionDoneSeq != seq || !strings.Contains(got.ActionError, "image not found") || !strings.Contains(got.ClientDescription, "rebuild failed") {
		t.Fatalf("failed rebuild: reported %+v", got)
	}
}

// hangAfter is a driver whose op (Destroy or LiveMigrate) takes effect
// and then hangs until the agent shuts down, as when the agent dies
// right after the hypervisor acted: its call returns an error and
// nothing is recorded.
type hangAfter struct {
	*fake.Driver
	op   string
	done atomic.Bool // the op took effect
}

func (d *hangAfter) hang(ctx context.Context, err error) error {
	if err != nil {
		return err
	}
	d.done.Store(true)
	<-ctx.Done()
	return ctx.Err()
}

func (d *hangAfter) Destroy(ctx context.Context, id string) error {
	err := d.Driver.Destroy(ctx, id)
	if d.op != "Destroy" {
		return err
	}
	return d.hang(ctx, err)
}

func (d *hangAfter) LiveMigrate(ctx context.Context, id, dest string) error {
	err := d.Driver.LiveMigrate(ctx, id, dest)
	if d.op != "LiveMigrate" {
		return err
	}
	return d.hang(ctx, err)
}

// TestRebuildResumesAfterRestart: an agent that stops in the middle of a
// rebuild, after the destroy, leaves it to the next agent, which spawns
// the instance exactly once and never reports it disappeared. Both
// windows are tried: the destroy done but not recorded, and the spawn
// under way.
func TestRebuildResumesAfterRestart(t *testing.T) {
	t.Run("after destroy", func(t *testing.T) {
		h := newHarness(t, fake.Config{})
		d := &hangAfter{Driver: h.fake, op: "Destroy"}
		h.driver = d
		c := h.start()
		a := h.srv.addAlloc(c.HostID())
		waitState(t, h.srv, a.ID, structs.AllocClientRunning)
		h.srv.setImage(a.InstanceID, "ubuntu")
		seq := h.srv.action(a.ID, structs.ActionRebuild, "")
		waitFor(t, "the destroy", d.done.Load)
		shutdown(t, c)
		st, _, _ := openAndRead(t, h.dir, a.ID)
		if st.RebuildSeq != seq || st.RebuildDestroyed || len(instances(t, h.fake)) != 0 {
			t.Fatalf("state after the destroy: %+v, instances %v", st, instances(t, h.fake))
		}

		h.driver = h.fake
		h.start()
		waitAction(t, h.srv, a.ID, seq)
		assertRebuilt(t, h, a, 2)
	})
	t.Run("during spawn", func(t *testing.T) {
		cfg := fake.Config{SpawnLatency: 300 * time.Millisecond}
		h := newPersistentHarness(t, cfg)
		c := h.start()
		a := h.srv.addAlloc(c.HostID())
		waitState(t, h.srv, a.ID, structs.AllocClientRunning)
		h.srv.setImage(a.InstanceID, "ubuntu")
		seq := h.srv.action(a.ID, structs.ActionRebuild, "")
		waitFor(t, "the rebuild's spawn", func() bool { return h.fake.Calls("Spawn") == 2 })
		shutdown(t, c)
		st, _, _ := openAndRead(t, h.dir, a.ID)
		if st.RebuildSeq != seq || !st.RebuildDestroyed || len(instances(t, h.fake)) != 0 {
			t.Fatalf("state during the spawn: %+v, instances %v", st, instances(t, h.fake))
		}

		h.reopen(cfg) // the hypervisor's state comes from its file
		h.start()
		waitAction(t, h.srv, a.ID, seq)
		assertRebuilt(t, h, a, 1)
		if n := h.fake.Calls("Destroy"); n != 0 {
			t.Fatalf("%d destroys after the restart: the new instance must never be destroyed", n)
		}
	})
}

// assertRebuilt checks a resumed rebuild's outcome: one running instance
// from the new image, spawns spawns on the current fake, no failure.
func assertRebuilt(t *testing.T, h *harness, a *structs.Allocation, spawns int) {
	t.Helper()
	got := h.srv.alloc(a.ID)
	if got.ClientState != structs.AllocClientRunning || got.PowerState != virt.PowerRunning || got.ActionError != "" {
		t.Fatalf("reported %+v", got)
	}
	h.waitSyncs(4)
	if ids := instances(t, h.fake); !reflect.DeepEqual(ids, []string{a.InstanceID}) {
		t.Fatalf("instances %v", ids)
	}
	if spec, _ := h.fake.Spec(a.InstanceID); spec.ImageID != "ubuntu" {
		t.Fatalf("image %q, want ubuntu", spec.ImageID)
	}
	if n := h.fake.Calls("Spawn"); n != spawns {
		t.Fatalf("%d spawns, want %d", n, spawns)
	}
	noReport(t, h.srv, a.ID, failedOrGone)
}

// TestLiveMigrate: the instance leaves, the action is reported done with
// the guest's power state, power syncs and a restart never report it
// failed, and the allocation's removal destroys nothing.
func TestLiveMigrate(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	allocs := h.srv.addAllocs(c.HostID(), 3)
	a, paused, clock := allocs[0], allocs[1], allocs[2] // clock keeps power syncs calling GetInfo
	for _, x := range allocs {
		waitState(t, h.srv, x.ID, structs.AllocClientRunning)
	}
	seq := h.srv.action(paused.ID, structs.ActionPause, "")
	waitAction(t, h.srv, paused.ID, seq)

	before := map[string]int{}
	for _, x := range []struct {
		alloc *structs.Allocation
		power int
	}{{a, virt.PowerRunning}, {paused, virt.PowerPaused}} {
		before[x.alloc.ID] = len(h.srv.reports(x.alloc.ID))
		seq := h.srv.action(x.alloc.ID, structs.ActionLiveMigrate, "10.0.0.2:8776")
		got := waitAction(t, h.srv, x.alloc.ID, seq)
		if got.ClientState != structs.AllocClientRunning || got.PowerState != x.power || got.ActionError != "" {
			t.Fatalf("live migration: reported %+v", got)
		}
		if dest := h.fake.MigratedTo(x.alloc.InstanceID); dest != "10.0.0.2:8776" {
			t.Fatalf("migrated to %q", dest)
		}
	}
	if ids := instances(t, h.fake); !reflect.DeepEqual(ids, []string{clock.InstanceID}) {
		t.Fatalf("instances %v", ids)
	}
	h.waitSyncs(5)
	shutdown(t, c)
	c = h.start()
	h.waitSyncs(5)
	for _, x := range []*structs.Allocation{a, paused} {
		noReport(t, h.srv, x.ID, failedOrGone)
		for _, u := range h.srv.reports(x.ID)[before[x.ID]:] {
			if u.ClientState != structs.AllocClientRunning {
				t.Fatalf("report after the migration: %+v", u)
			}
		}
	}
	if n := h.fake.Calls("Spawn"); n != 3 {
		t.Fatalf("%d spawns: a migrated instance must not be rebuilt here", n)
	}

	// The servers drop the allocation: nothing to destroy, record gone.
	destroys := h.fake.Calls("Destroy")
	h.srv.removeAlloc(a.ID)
	waitFor(t, "the allocation to be forgotten", func() bool {
		_, ok, _ := c.state.getAlloc(a.ID)
		return !ok && c.runner(a.ID) == nil
	})
	if n := h.fake.Calls("Destroy"); n != destroys {
		t.Fatalf("%d destroys of a migrated instance", n-destroys)
	}
}

// TestLiveMigrateFailure: a failed migration is reported with its error
// and the instance stays managed here.
func TestLiveMigrateFailure(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	h.fake.FailNext("LiveMigrate", errors.New("destination unreachable"))
	seq := h.srv.action(a.ID, structs.ActionLiveMigrate, "10.0.0.2:8776")
	got := waitAction(t, h.srv, a.ID, seq)
	if !strings.Contains(got.ActionError, "destination unreachable") || got.ClientState != structs.AllocClientRunning || got.PowerState != virt.PowerRunning {
		t.Fatalf("reported %+v", got)
	}
	h.waitSyncs(4)
	st, _, _ := c.state.getAlloc(a.ID)
	if st.MigrateSeq != 0 || st.MigratedAway || power(h.fake, a.InstanceID) != virt.PowerRunning || h.fake.Calls("LiveMigrate") != 1 {
		t.Fatalf("after a failed migration: state %+v, power %d, %d attempts", st, power(h.fake, a.InstanceID), h.fake.Calls("LiveMigrate"))
	}
	// Managed as before: a guest that vanishes now has disappeared.
	if err := h.fake.Destroy(t.Context(), a.InstanceID); err != nil {
		t.Fatal(err)
	}
	waitState(t, h.srv, a.ID, structs.AllocClientFailed)
}

// TestLiveMigrateInterruptedByRestart: the migration went through but
// the agent stopped before recording it; the next agent finds the
// instance gone and reports the migration done, not a disappearance.
func TestLiveMigrateInterruptedByRestart(t *testing.T) {
	h := newHarness(t, fake.Config{})
	d := &hangAfter{Driver: h.fake, op: "LiveMigrate"}
	h.driver = d
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	seq := h.srv.action(a.ID, structs.ActionLiveMigrate, "10.0.0.2:8776")
	waitFor(t, "the migration", d.done.Load)
	shutdown(t, c)

	h.driver = h.fake
	h.start()
	got := waitAction(t, h.srv, a.ID, seq)
	if got.ClientState != structs.AllocClientRunning || got.PowerState != virt.PowerRunning || got.ActionError != "" {
		t.Fatalf("reported %+v", got)
	}
	b := h.srv.addAlloc(got.HostID) // a clock for the power syncs
	waitState(t, h.srv, b.ID, structs.AllocClientRunning)
	h.waitSyncs(4)
	noReport(t, h.srv, a.ID, failedOrGone)
	if n := h.fake.Calls("LiveMigrate"); n != 1 {
		t.Fatalf("%d migrations", n)
	}
}

// TestHeldAllocation: a held allocation is neither spawned nor reported;
// made running, it spawns with the allocation's flavor.
func TestHeldAllocation(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	large := &structs.Flavor{ID: "2", Name: "m1.large", VCPUs: 4, MemoryMB: 8192, RootGB: 40,
		ExtraSpecs: map[string]string{"hw:cpu_policy": "dedicated"}}
	a := h.srv.addAllocWith(c.HostID(), func(a *structs.Allocation, _ *structs.Instance) {
		a.DesiredState, a.Flavor = structs.AllocDesiredHeld, large
	})
	clock := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, clock.ID, structs.AllocClientRunning)
	h.waitSyncs(5)
	if reps := h.srv.reports(a.ID); len(reps) != 0 {
		t.Fatalf("reports about a held allocation: %+v", reps)
	}
	if _, ok, _ := c.state.getAlloc(a.ID); ok || h.fake.Calls("Spawn") != 1 {
		t.Fatalf("a held allocation was acted upon: recorded %v, %d spawns", ok, h.fake.Calls("Spawn"))
	}
	if got := h.srv.alloc(a.ID); got.ClientState != structs.AllocClientPending {
		t.Fatalf("held allocation %+v", got)
	}

	h.srv.setDesired(a.ID, structs.AllocDesiredRunning)
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	spec, err := h.fake.Spec(a.InstanceID)
	if err != nil {
		t.Fatal(err)
	}
	if spec.VCPUs != 4 || spec.MemoryMB != 8192 || spec.RootGB != 40 || spec.ExtraSpecs["hw:cpu_policy"] != "dedicated" || spec.ImageID != "cirros" {
		t.Fatalf("spec %+v, want the allocation's flavor", spec)
	}
}

// TestHeldAllocationAttaches: an instance a live migration brought here
// while the allocation was held survives the orphan reaper, and is
// re-attached, not spawned, when the allocation becomes running.
func TestHeldAllocationAttaches(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.newClient()
	a := h.srv.addAllocWith(c.HostID(), func(a *structs.Allocation, _ *structs.Instance) {
		a.DesiredState = structs.AllocDesiredHeld
	})
	for _, id := range []string{a.InstanceID, "orphan-1"} {
		if _, err := h.fake.Spawn(t.Context(), &virt.InstanceSpec{ID: id, VCPUs: 1, MemoryMB: 64}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the orphan to be reaped", func() bool {
		return reflect.DeepEqual(instances(t, h.fake), []string{a.InstanceID})
	})
	if reps := h.srv.reports(a.ID); len(reps) != 0 {
		t.Fatalf("reports about a held allocation: %+v", reps)
	}
	h.srv.setDesired(a.ID, structs.AllocDesiredRunning)
	if got := waitState(t, h.srv, a.ID, structs.AllocClientRunning); got.PowerState != virt.PowerRunning {
		t.Fatalf("reported %+v", got)
	}
	if n := h.fake.Calls("Spawn"); n != 2 {
		t.Fatalf("%d spawns, want only the test's 2", n)
	}
	noReport(t, h.srv, a.ID, func(u structs.AllocClientUpdate) bool { return u.ClientState == structs.AllocClientSpawning })
}
