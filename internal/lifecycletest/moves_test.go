package lifecycletest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// usage reads a host's usage of one resource class.
func (c *cloud) usage(name, class string) int64 {
	h := c.host(name)
	if h == nil {
		return -1
	}
	return h.Usage[class]
}

func (c *cloud) otherHost(name string) string {
	for _, n := range []string{"hv1", "hv2", "hv3"} {
		if n != name && c.hv(n) != nil {
			return n
		}
	}
	return ""
}

// TestResizeRevertRestoresHostAndAllocation resizes to another host,
// checks VERIFY_RESIZE holds both hosts' allocations, reverts (the
// original host, flavor and allocation come back, the destination is
// freed), then resizes again and confirms.
func TestResizeRevertRestoresHostAndAllocation(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1", "hv2"}})
	id := c.boot("vm", "m1.tiny")
	before, allocsBefore := c.get(id)
	src := c.hostName(before.HostID)
	dst := c.otherHost(src)
	srcMem := c.usage(src, structs.ResourceMemoryMB)

	stop := c.watch(id)
	out := c.mustTask(id, structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = "m1.small" })
	inst := c.waitStatus(id, "VERIFY_RESIZE")
	expectSeen(t, "resize", stop(), "RESIZE/resize_migrating", "RESIZE/resize_finish", "VERIFY_RESIZE/")
	if c.hostName(inst.HostID) != dst || inst.Flavor.Name != "m1.small" || inst.Resize == nil || inst.Resize.OldFlavor.Name != "m1.tiny" {
		t.Fatalf("after resize: host %s flavor %s resize %+v", c.hostName(inst.HostID), inst.Flavor.Name, inst.Resize)
	}
	if got := c.usage(src, structs.ResourceMemoryMB); got != srcMem {
		t.Fatalf("source usage %d during VERIFY_RESIZE, want %d kept", got, srcMem)
	}
	if got := c.usage(dst, structs.ResourceMemoryMB); got != 2048 {
		t.Fatalf("destination usage %d, want m1.small's 2048", got)
	}
	if n := len(c.hv(src).instances(t)); n != 1 {
		t.Fatalf("source runs %d instances during VERIFY_RESIZE", n)
	}
	migs := c.migrations(id)
	if len(migs) != 1 || migs[0].ID != out.MigrationID || migs[0].Status != structs.MigrationFinished || migs[0].Type != structs.MigrationTypeResize ||
		migs[0].OldFlavorID != before.FlavorID || migs[0].NewFlavorID != "2" || migs[0].DestHost != dst {
		t.Fatalf("migration %+v", migs[0])
	}

	stop = c.watch(id)
	c.mustTask(id, structs.OpRevertResize)
	inst, allocs := c.get(c.waitStatus(id, "ACTIVE").ID)
	expectSeen(t, "revert", stop(), "REVERT_RESIZE/resize_reverting", "ACTIVE/")
	if inst.HostID != before.HostID || inst.Flavor.Name != "m1.tiny" || inst.Resize != nil {
		t.Fatalf("after revert: %+v", inst)
	}
	if len(allocs) != 1 || allocs[0].ID != allocsBefore[0].ID || allocs[0].DesiredState != structs.AllocDesiredRunning {
		t.Fatalf("after revert allocations %+v, want the original %s", allocs, allocsBefore[0].ID)
	}
	c.waitFor("destination freed", func() error {
		if u := c.usage(dst, structs.ResourceMemoryMB); u != 0 {
			return fmt.Errorf("destination usage %d", u)
		}
		if n := len(c.hv(dst).instances(t)); n != 0 {
			return fmt.Errorf("destination runs %d", n)
		}
		return nil
	})
	if m := c.migrations(id)[0]; m.Status != structs.MigrationReverted {
		t.Fatalf("migration after revert %+v", m)
	}
	lastAction(t, c, id, structs.OpRevertResize, structs.EventSuccess)

	c.mustTask(id, structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = "m1.small" })
	c.waitStatus(id, "VERIFY_RESIZE")
	c.mustTask(id, structs.OpConfirmResize)
	inst = c.waitStatus(id, "ACTIVE")
	if c.hostName(inst.HostID) != dst || inst.Flavor.Name != "m1.small" {
		t.Fatalf("after confirm %+v", inst)
	}
	c.waitFor("source freed and migration confirmed", func() error {
		if u := c.usage(src, structs.ResourceMemoryMB); u != 0 {
			return fmt.Errorf("source usage %d", u)
		}
		if n := len(c.hv(src).instances(t)); n != 0 {
			return fmt.Errorf("source runs %d", n)
		}
		for _, m := range c.migrations(id) {
			if m.Status != structs.MigrationConfirmed && m.Status != structs.MigrationReverted {
				return fmt.Errorf("migration %d %s", m.ID, m.Status)
			}
		}
		return nil
	})
	if _, err := c.task(id, structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = "m1.small" }); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("resize to the same flavor: %v", err)
	}
}

// TestColdMigrateKeepsAStoppedInstanceStopped migrates a stopped
// instance: it stays SHUTOFF on the new host.
func TestColdMigrateKeepsAStoppedInstanceStopped(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1", "hv2"}})
	id := c.boot("vm", "m1.tiny")
	c.mustTask(id, structs.OpStop)
	src := c.hostName(c.waitStatus(id, "SHUTOFF").HostID)
	c.mustTask(id, structs.OpMigrate)
	c.waitStatus(id, "VERIFY_RESIZE")
	c.mustTask(id, structs.OpConfirmResize)
	inst := c.waitStatus(id, "SHUTOFF")
	if c.hostName(inst.HostID) == src || inst.PowerState != structs.PowerShutdown {
		t.Fatalf("migrated %+v", inst)
	}
	if m := c.migrations(id); len(m) != 1 || m[0].Type != structs.MigrationTypeMigration {
		t.Fatalf("migrations %+v", m)
	}
}

// TestLiveMigrationMovesARunningInstance moves a running instance; it
// stays ACTIVE, the source is emptied, the migration completes.
func TestLiveMigrationMovesARunningInstance(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1", "hv2"}})
	id := c.boot("vm", "m1.tiny")
	src := c.hostName(c.inst(id).HostID)
	dst := c.otherHost(src)
	stop := c.watch(id)
	c.mustTask(id, structs.OpLiveMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = dst })
	inst := c.waitStatus(id, "ACTIVE")
	expectSeen(t, "live-migration", stop(), "MIGRATING/migrating")
	if c.hostName(inst.HostID) != dst {
		t.Fatalf("on %s, want %s", c.hostName(inst.HostID), dst)
	}
	if got := c.hv(src).drv.MigratedTo(id); got != dst {
		t.Fatalf("source driver migrated it to %q", got)
	}
	c.waitFor("source empty", func() error {
		if n := len(c.hv(src).instances(t)); n != 0 || c.usage(src, structs.ResourceVCPU) != 0 {
			return fmt.Errorf("source runs %d", n)
		}
		return nil
	})
	if m := c.migrations(id); len(m) != 1 || m[0].Status != structs.MigrationCompleted || m[0].Type != structs.MigrationTypeLive {
		t.Fatalf("migrations %+v", m[0])
	}
	lastAction(t, c, id, structs.OpLiveMigrate, structs.EventSuccess)
	if _, err := c.task(id, structs.OpLiveMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = dst }); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("live migration to its own host: %v", err)
	}
}

// TestShelveOffloadAndUnshelve shelves (offloading at once, Nova's
// default), which frees the host, and unshelves, which schedules again.
func TestShelveOffloadAndUnshelve(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1"}})
	id := c.boot("vm", "m1.tiny")
	stop := c.watch(id)
	c.mustTask(id, structs.OpShelve)
	inst, allocs := c.get(c.waitStatus(id, "SHELVED_OFFLOADED").ID)
	expectSeen(t, "shelve", stop(), "ACTIVE/shelving", "SHELVED/shelving_offloading", "SHELVED_OFFLOADED/")
	if inst.HostID != "" || len(allocs) != 0 || c.usage("hv1", structs.ResourceVCPU) != 0 || len(c.hv("hv1").instances(t)) != 0 {
		t.Fatalf("offloaded instance %+v allocs %v", inst, allocs)
	}
	stop = c.watch(id)
	c.mustTask(id, structs.OpUnshelve)
	inst = c.waitStatus(id, "ACTIVE")
	expectSeen(t, "unshelve", stop(), "SHELVED_OFFLOADED/unshelving", "ACTIVE/")
	if inst.HostID == "" || len(c.hv("hv1").instances(t)) != 1 {
		t.Fatalf("unshelved %+v", inst)
	}
	lastAction(t, c, id, structs.OpUnshelve, structs.EventSuccess)
}

// TestShelveKeepsTheHostUntilOffloadTime shelves with an offload time:
// SHELVED keeps the host, unshelve just starts it; then the timer
// offloads.
func TestShelveKeepsTheHostUntilOffloadTime(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1"}, tweak: func(cfg *server.Config) { cfg.ShelvedOffloadTime = 2 * time.Second }})
	id := c.boot("vm", "m1.tiny")
	c.mustTask(id, structs.OpShelve)
	if inst := c.waitStatus(id, "SHELVED"); inst.HostID == "" {
		t.Fatalf("shelved %+v", inst)
	}
	c.mustTask(id, structs.OpUnshelve)
	c.waitStatus(id, "ACTIVE")
	c.mustTask(id, structs.OpShelve)
	c.waitStatus(id, "SHELVED")
	c.waitStatus(id, "SHELVED_OFFLOADED")
}

// TestEvacuateAfterHostIsKilled kills a host's agent; once the host is
// down the instance is rebuilt elsewhere; when the agent comes back it
// destroys its stale copy.
func TestEvacuateAfterHostIsKilled(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1", "hv2"}})
	id := c.boot("vm", "m1.tiny")
	src := c.hostName(c.inst(id).HostID)
	if _, err := c.task(id, structs.OpEvacuate); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("evacuate from an up host: %v", err)
	}
	c.stopAgent(src)
	c.waitFor("host down", func() error {
		if h := c.host(src); h.Up() {
			return fmt.Errorf("%s still %s", src, h.Status)
		}
		return nil
	})
	stop := c.watch(id)
	c.mustTask(id, structs.OpEvacuate)
	inst := c.waitStatus(id, "ACTIVE")
	expectSeen(t, "evacuate", stop(), "REBUILD/rebuilding")
	if c.hostName(inst.HostID) == src {
		t.Fatalf("still on %s", src)
	}
	if m := c.migrations(id); len(m) != 1 || m[0].Type != structs.MigrationTypeEvacuation || m[0].Status != structs.MigrationDone {
		t.Fatalf("migrations %+v", m)
	}
	c.startAgent(src)
	c.waitFor("stale copy destroyed", func() error {
		if n := len(c.hv(src).instances(t)); n != 0 {
			return fmt.Errorf("%s still runs %d", src, n)
		}
		return nil
	})
}

// TestDeleteWhateverTheState deletes an instance in ERROR and one on a
// down host: both go at once.
func TestDeleteWhateverTheState(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1", "hv2"}, tweak: func(cfg *server.Config) { cfg.MaxBuildAttempts = 1 }})
	c.hv("hv1").drv.FailNext("Spawn", nil)
	c.hv("hv2").drv.FailNext("Spawn", nil)
	var out structs.InstanceCreateResponse
	if err := c.rpc("Instance.Create", &structs.InstanceCreateRequest{Name: "bad", FlavorID: "m1.tiny", ImageID: "cirros"}, &out); err != nil {
		t.Fatal(err)
	}
	bad := out.Instances[0].ID
	if inst := c.waitStatus(bad, "ERROR"); inst.Fault == nil {
		t.Fatalf("no fault %+v", inst)
	}
	lastAction(t, c, bad, "create", structs.EventError)
	c.hv("hv1").drv.ClearFailures()
	c.hv("hv2").drv.ClearFailures()
	id := c.boot("vm", "m1.tiny")
	host := c.hostName(c.inst(id).HostID)
	c.stopAgent(host)
	c.waitFor("host down", func() error {
		if h := c.host(host); h.Up() {
			return fmt.Errorf("up")
		}
		return nil
	})
	for _, x := range []string{bad, id} {
		if err := c.rpc("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{x}}, &structs.GenericResponse{}); err != nil {
			t.Fatal(err)
		}
		c.waitGone(x)
	}
	if acts := c.actions(id); acts[0].Action != "delete" || acts[0].Events[0].Result != structs.EventSuccess {
		t.Fatalf("delete action %+v", acts[0])
	}
}

// TestSoftDeleteRestoreAndReclaim configures reclaim: a delete is soft,
// restore brings the instance back, and the interval reclaims it.
func TestSoftDeleteRestoreAndReclaim(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1"}, tweak: func(cfg *server.Config) { cfg.ReclaimInstanceInterval = 3 * time.Second }})
	id := c.boot("vm", "m1.tiny")
	del := func(force bool) {
		t.Helper()
		if err := c.rpc("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{id}, Force: force}, &structs.GenericResponse{}); err != nil {
			t.Fatal(err)
		}
	}
	del(false)
	if inst := c.waitStatus(id, "SOFT_DELETED"); inst.PowerState != structs.PowerShutdown {
		t.Fatalf("soft-deleted %+v", inst)
	}
	c.mustTask(id, structs.OpRestore)
	c.waitStatus(id, "ACTIVE")
	del(false)
	c.waitStatus(id, "SOFT_DELETED")
	c.waitGone(id) // reclaimed by the leader after the interval
	if n := len(c.hv("hv1").instances(t)); n != 0 {
		t.Fatalf("hypervisor still runs %d", n)
	}
}

// TestAutomaticConfirm confirms a resize after resize_confirm_window.
func TestAutomaticConfirm(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1", "hv2"}, tweak: func(cfg *server.Config) { cfg.ResizeConfirmWindow = time.Second }})
	id := c.boot("vm", "m1.tiny")
	c.mustTask(id, structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = "m1.small" })
	c.waitStatus(id, "VERIFY_RESIZE")
	c.waitStatus(id, "ACTIVE")
	c.waitFor("confirmed", func() error {
		if m := c.migrations(id)[0]; m.Status != structs.MigrationConfirmed {
			return fmt.Errorf("migration %s", m.Status)
		}
		return nil
	})
}

// TestDrainMovesEverythingOffAHost drains a host: running instances
// live-migrate, stopped ones cold-migrate (the drain confirms them),
// shelved ones are offloaded, and the drain completes empty.
func TestDrainMovesEverythingOffAHost(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1"}})
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, c.boot(fmt.Sprintf("vm%d", i), "m1.tiny"))
	}
	c.mustTask(ids[1], structs.OpStop)
	c.waitStatus(ids[1], "SHUTOFF")
	c.addHost("hv2")
	if err := c.rpc("Host.UpdateEnabled", &structs.HostUpdateEnabledRequest{HostID: "hv1", Drain: true}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	c.waitFor("drain complete", func() error {
		h := c.host("hv1")
		if h.Drain == nil || !h.Drain.Complete {
			return fmt.Errorf("drain %+v, usage %v", h.Drain, h.Usage)
		}
		return nil
	})
	if h := c.host("hv1"); h.Enabled || len(h.Usage) != 0 && h.Usage[structs.ResourceVCPU] != 0 {
		t.Fatalf("drained host %+v", h)
	}
	want := []string{"ACTIVE", "SHUTOFF", "ACTIVE"}
	for i, id := range ids {
		inst := c.waitStatus(id, want[i])
		if c.hostName(inst.HostID) != "hv2" {
			t.Fatalf("%s still on %s", id, c.hostName(inst.HostID))
		}
	}
	if n := len(c.hv("hv1").instances(t)); n != 0 {
		t.Fatalf("hv1 still runs %d", n)
	}
}

// TestFailedMoveLeavesTheInstanceWhereItWas fails the destination's
// spawn, then kills a destination mid-spawn: each time the resize fails
// (action Error, migration error), the destination is freed and the
// instance carries on, ACTIVE, on its source.
func TestFailedMoveLeavesTheInstanceWhereItWas(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1"}})
	id := c.boot("vm", "m1.tiny")
	c.addHostWith("hv2", fake.Config{SpawnLatency: 2 * time.Second})
	c.hv("hv2").drv.FailNext("Spawn", nil)
	c.mustTask(id, structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = "m1.small" })
	check := func(n int) {
		t.Helper()
		inst := c.waitStatus(id, "ACTIVE")
		if c.hostName(inst.HostID) != "hv1" || inst.Flavor.Name != "m1.tiny" {
			t.Fatalf("after a failed resize: on %s with %s", c.hostName(inst.HostID), inst.Flavor.Name)
		}
		lastAction(t, c, id, structs.OpResize, "")
		if a := c.actions(id)[0]; a.Message != "Error" {
			t.Fatalf("failed resize action %+v", a)
		}
		migs := c.migrations(id)
		if len(migs) != n || migs[n-1].Status != structs.MigrationError {
			t.Fatalf("migrations %+v", migs)
		}
		c.waitFor("destination freed", func() error {
			if u := c.usage("hv2", structs.ResourceVCPU); u > 0 {
				return fmt.Errorf("hv2 usage %d", u)
			}
			return nil
		})
	}
	check(1)

	c.mustTask(id, structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = "m1.small" })
	c.waitFor("the destination spawning", func() error {
		if ts := c.inst(id).TaskState; ts != structs.TaskResizeFinish {
			return fmt.Errorf("task state %q", ts)
		}
		return nil
	})
	c.stopAgent("hv2")
	check(2)
}
