package lifecycletest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// eventsOnce checks an action's events each happened exactly once.
func eventsOnce(t *testing.T, a *structs.InstanceAction) {
	t.Helper()
	seen := map[string]int{}
	for _, ev := range a.Events {
		seen[ev.Event]++
		if seen[ev.Event] > 1 {
			t.Fatalf("action %s recorded %s twice: %+v", a.Action, ev.Event, a.Events)
		}
	}
}

// TestResizeSurvivesLeaderChange kills the leader while a resize is in
// flight (the destination still spawning): the new leader carries on
// from state, and the resize completes exactly once.
func TestResizeSurvivesLeaderChange(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{servers: 3})
	slow := fake.Config{SpawnLatency: 1500 * time.Millisecond, PowerLatency: 500 * time.Millisecond, DestroyLatency: latency}
	c.addHostWith("hv1", slow)
	id := c.boot("vm", "m1.tiny")
	c.addHostWith("hv2", slow)
	c.mustTask(id, structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = "m1.small" })
	c.waitFor("the source powering off", func() error {
		if ts := c.inst(id).TaskState; ts != structs.TaskResizeMigrating {
			return fmt.Errorf("task state %q", ts)
		}
		return nil
	})
	old := c.leader()
	if err := old.Shutdown(); err != nil {
		t.Fatal(err)
	}
	c.waitFor("a new leader", func() error {
		if l := c.leader(); l == nil || l == old {
			return fmt.Errorf("no new leader")
		}
		return nil
	})
	c.drop(old)
	inst := c.waitStatus(id, "VERIFY_RESIZE")
	if c.hostName(inst.HostID) != "hv2" || inst.Flavor.Name != "m1.small" {
		t.Fatalf("after resize %+v", inst)
	}
	if n := c.hv("hv2").drv.Calls("Spawn"); n != 1 {
		t.Fatalf("destination spawned %d times", n)
	}
	c.mustTask(id, structs.OpConfirmResize)
	c.waitStatus(id, "ACTIVE")
	c.waitFor("source destroyed once", func() error {
		if n := len(c.hv("hv1").instances(t)); n != 0 {
			return fmt.Errorf("source runs %d", n)
		}
		return nil
	})
	if n := len(c.hv("hv2").instances(t)); n != 1 {
		t.Fatalf("destination runs %d", n)
	}
	for _, a := range c.actions(id) {
		eventsOnce(t, a)
	}
}

// TestOperationsSurviveAgentRestart restarts the agent in the middle of
// a reboot (the action is in the driver) and of a resize (the
// destination is spawning): each completes, exactly once.
func TestOperationsSurviveAgentRestart(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{})
	slow := fake.Config{SpawnLatency: time.Second, PowerLatency: time.Second, DestroyLatency: latency}
	c.addHostWith("hv1", slow)
	id := c.boot("vm", "m1.tiny")

	c.mustTask(id, structs.OpRebootHard)
	c.waitFor("the reboot in the driver", func() error {
		if n := c.hv("hv1").drv.Calls("Reboot"); n != 1 {
			return fmt.Errorf("%d reboots", n)
		}
		return nil
	})
	c.stopAgent("hv1")
	c.startAgent("hv1")
	c.waitStatus(id, "ACTIVE")
	reboots := c.hv("hv1").drv.Calls("Reboot")
	lastAction(t, c, id, "reboot", structs.EventSuccess)
	// Another restart must not reboot again: the action is done.
	c.stopAgent("hv1")
	c.startAgent("hv1")
	time.Sleep(time.Second) // a power sync's worth: nothing may happen
	if n := c.hv("hv1").drv.Calls("Reboot"); n != reboots {
		t.Fatalf("rebooted again after a restart: %d calls, was %d", n, reboots)
	}

	c.addHostWith("hv2", slow)
	c.mustTask(id, structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = "m1.small" })
	c.waitFor("the destination spawning", func() error {
		if n := c.hv("hv2").drv.Calls("Spawn"); n < 1 {
			return fmt.Errorf("no spawn yet")
		}
		return nil
	})
	c.stopAgent("hv2")
	c.startAgent("hv2")
	inst := c.waitStatus(id, "VERIFY_RESIZE")
	if c.hostName(inst.HostID) != "hv2" {
		t.Fatalf("on %s", c.hostName(inst.HostID))
	}
	if n := len(c.hv("hv2").instances(t)); n != 1 {
		t.Fatalf("destination runs %d copies", n)
	}
	c.mustTask(id, structs.OpRevertResize)
	c.waitStatus(id, "ACTIVE")
	c.waitFor("destination emptied", func() error {
		if n := len(c.hv("hv2").instances(t)); n != 0 {
			return fmt.Errorf("destination runs %d", n)
		}
		return nil
	})
	for _, a := range c.actions(id) {
		eventsOnce(t, a)
	}
}
