package client

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

func TestSpawnReachesRunning(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	got := waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	if got.PowerState != structs.PowerRunning || got.ClientDescription != "" {
		t.Fatalf("reported %+v", got)
	}
	spec, err := h.fake.Spec(a.InstanceID)
	if err != nil {
		t.Fatal(err)
	}
	want := virt.InstanceSpec{
		ID: a.InstanceID, Name: "vm-001", VCPUs: 2, MemoryMB: 2048, RootGB: 20, EphemeralGB: 1, SwapMB: 512,
		ImageID: "cirros", ImageProperties: map[string]string{"architecture": "x86_64"},
		ExtraSpecs: map[string]string{"hw:cpu_policy": "shared"}, Metadata: map[string]string{"role": "test"},
	}
	if !reflect.DeepEqual(*spec, want) {
		t.Fatalf("spec %+v\nwant %+v", *spec, want)
	}
	if n := h.fake.Calls("Spawn"); n != 1 {
		t.Fatalf("%d spawns", n)
	}
	st, ok, err := c.state.getAlloc(a.ID)
	if err != nil || !ok || !st.Spawned || st.InstanceID != a.InstanceID {
		t.Fatalf("local state %+v %v %v", st, ok, err)
	}
	// The first report said spawning (unless coalesced), the last running.
	reps := h.srv.reports(a.ID)
	if last := reps[len(reps)-1]; last.ClientState != structs.AllocClientRunning {
		t.Fatalf("last report %+v", last)
	}
	for _, r := range reps[:len(reps)-1] {
		if r.ClientState != structs.AllocClientSpawning {
			t.Fatalf("unexpected report before running: %+v", r)
		}
	}
}

func TestSpawnFailureReportedFailed(t *testing.T) {
	h := newHarness(t, fake.Config{})
	h.fake.FailNext("Spawn", errors.New("no space left on device"))
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	got := waitState(t, h.srv, a.ID, structs.AllocClientFailed)
	if !strings.Contains(got.ClientDescription, "no space left on device") {
		t.Fatalf("description %q", got.ClientDescription)
	}
	if ids := instances(t, h.fake); len(ids) != 0 {
		t.Fatalf("instances left behind: %v", ids)
	}
	// Power syncs pass (a running allocation's GetInfo calls are the
	// clock); a failed allocation is never retried here.
	b := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, b.ID, structs.AllocClientRunning)
	gi := h.fake.Calls("GetInfo")
	waitFor(t, "power syncs", func() bool { return h.fake.Calls("GetInfo") > gi+3 })
	if n := h.fake.Calls("Spawn"); n != 2 {
		t.Fatalf("%d spawns after a failure", n)
	}
}

func TestSpawnWithoutFlavorFails(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	h.srv.mu.Lock()
	h.srv.instances[a.InstanceID].Flavor = nil
	h.srv.mu.Unlock()
	h.srv.setDesired(a.ID, structs.AllocDesiredRunning)
	// It may have spawned before the flavor vanished; if not, it failed.
	waitFor(t, "a verdict", func() bool {
		s := h.srv.alloc(a.ID).ClientState
		return s == structs.AllocClientFailed || s == structs.AllocClientRunning
	})
}

func TestStopStartReboot(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)

	h.srv.setDesired(a.ID, structs.AllocDesiredStopped)
	got := waitState(t, h.srv, a.ID, structs.AllocClientStopped)
	if got.PowerState != structs.PowerShutdown || power(h.fake, a.InstanceID) != virt.PowerShutdown || h.fake.Calls("PowerOff") != 1 {
		t.Fatalf("stop: %+v, driver power %d, PowerOff calls %d", got, power(h.fake, a.InstanceID), h.fake.Calls("PowerOff"))
	}

	h.srv.setDesired(a.ID, structs.AllocDesiredRunning)
	got = waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	if got.PowerState != structs.PowerRunning || h.fake.Calls("PowerOn") != 1 {
		t.Fatalf("start: %+v, PowerOn calls %d", got, h.fake.Calls("PowerOn"))
	}

	seq := h.srv.reboot(a.ID, false)
	waitFor(t, "the reboot to be reported done", func() bool { return h.srv.alloc(a.ID).ActionDoneSeq == seq })
	if n := h.fake.Calls("Reboot"); n != 1 {
		t.Fatalf("%d reboots", n)
	}

	// Another change with the same ActionSeq does not reboot again.
	idx := h.srv.setDesired(a.ID, structs.AllocDesiredRunning)
	waitFor(t, "the change to be handled", func() bool {
		st, _, _ := c.state.getAlloc(a.ID)
		return st.HandledIndex >= idx
	})
	if n := h.fake.Calls("Reboot"); n != 1 {
		t.Fatalf("%d reboots after an unrelated change", n)
	}

	// Nor does a restart.
	shutdown(t, c)
	c = h.start()
	h.srv.setDesired(a.ID, structs.AllocDesiredStopped)
	waitState(t, h.srv, a.ID, structs.AllocClientStopped)
	if n := h.fake.Calls("Reboot"); n != 1 {
		t.Fatalf("%d reboots after a restart", n)
	}
	if n := h.fake.Calls("Spawn"); n != 1 {
		t.Fatalf("%d spawns after a restart", n)
	}

	// A hard reboot of a running instance with a new seq happens once.
	h.srv.setDesired(a.ID, structs.AllocDesiredRunning)
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	seq = h.srv.reboot(a.ID, true)
	waitFor(t, "the hard reboot to be reported done", func() bool { return h.srv.alloc(a.ID).ActionDoneSeq == seq })
	if n := h.fake.Calls("Reboot"); n != 2 {
		t.Fatalf("%d reboots", n)
	}
	_ = c
}

func TestRebootFailureIsReportedOnce(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	h.fake.FailNext("Reboot", errors.New("guest agent unresponsive"))
	seq := h.srv.reboot(a.ID, false)
	waitFor(t, "the reboot to be reported done", func() bool { return h.srv.alloc(a.ID).ActionDoneSeq == seq })
	if got := h.srv.alloc(a.ID); !strings.Contains(got.ClientDescription, "guest agent unresponsive") || got.ClientState != structs.AllocClientRunning {
		t.Fatalf("reported %+v", got)
	}
	gi := h.fake.Calls("GetInfo")
	waitFor(t, "power syncs", func() bool { return h.fake.Calls("GetInfo") > gi+2 })
	if n := h.fake.Calls("Reboot"); n != 1 {
		t.Fatalf("%d reboots", n)
	}
}

func TestDeleteDestroysAndReports(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	h.srv.setDesired(a.ID, structs.AllocDesiredDeleted)
	got := waitState(t, h.srv, a.ID, structs.AllocClientDeleted)
	if got.PowerState != structs.PowerNoState {
		t.Fatalf("reported %+v", got)
	}
	if ids := instances(t, h.fake); len(ids) != 0 {
		t.Fatalf("instances left: %v", ids)
	}
	if _, ok, _ := c.state.getAlloc(a.ID); ok {
		t.Fatal("deleted allocation still in local state")
	}
	// Destroy is retried when it fails.
	b := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, b.ID, structs.AllocClientRunning)
	h.fake.FailNext("Destroy", nil)
	h.srv.setDesired(b.ID, structs.AllocDesiredDeleted)
	waitState(t, h.srv, b.ID, structs.AllocClientDeleted)
	if ids := instances(t, h.fake); len(ids) != 0 {
		t.Fatalf("instances left: %v", ids)
	}
}

func TestVanishedAllocationDestroyed(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	h.srv.removeAlloc(a.ID)
	waitFor(t, "the instance to be destroyed", func() bool { return len(instances(t, h.fake)) == 0 })
	waitFor(t, "the allocation to be forgotten", func() bool {
		_, ok, _ := c.state.getAlloc(a.ID)
		return !ok && c.runner(a.ID) == nil
	})
}

func TestPowerDrift(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	allocs := h.srv.addAllocs(c.HostID(), 3)
	a, b, d := allocs[0], allocs[1], allocs[2]
	for _, x := range allocs {
		waitState(t, h.srv, x.ID, structs.AllocClientRunning)
	}

	// The guest shuts itself down: reported stopped, not restarted.
	if err := h.fake.SetPowerState(a.InstanceID, virt.PowerShutdown); err != nil {
		t.Fatal(err)
	}
	got := waitState(t, h.srv, a.ID, structs.AllocClientStopped)
	if got.PowerState != structs.PowerShutdown || got.DesiredState != structs.AllocDesiredRunning {
		t.Fatalf("reported %+v", got)
	}
	gi := h.fake.Calls("GetInfo")
	waitFor(t, "more power syncs", func() bool { return h.fake.Calls("GetInfo") > gi+6 })
	if n := h.fake.Calls("PowerOn"); n != 0 || power(h.fake, a.InstanceID) != virt.PowerShutdown {
		t.Fatalf("the guest was restarted (%d PowerOn calls)", n)
	}
	// A start from the user (a desired change) powers it on.
	h.srv.setDesired(a.ID, structs.AllocDesiredRunning)
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)

	// A paused guest is still running, with its power state reported.
	if err := h.fake.SetPowerState(a.InstanceID, virt.PowerPaused); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pause to be reported", func() bool {
		got := h.srv.alloc(a.ID)
		return got.PowerState == structs.PowerPaused && got.ClientState == structs.AllocClientRunning
	})

	// Desired stopped but running: powered off.
	h.srv.setDesired(b.ID, structs.AllocDesiredStopped)
	waitState(t, h.srv, b.ID, structs.AllocClientStopped)
	if err := h.fake.SetPowerState(b.InstanceID, virt.PowerRunning); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the drifted guest to be powered off", func() bool {
		return h.fake.Calls("PowerOff") == 2 && power(h.fake, b.InstanceID) == virt.PowerShutdown
	})
	if got := h.srv.alloc(b.ID); got.ClientState != structs.AllocClientStopped {
		t.Fatalf("reported %+v", got)
	}

	// The instance vanishes behind our back while desired running.
	if err := h.fake.Destroy(t.Context(), d.InstanceID); err != nil {
		t.Fatal(err)
	}
	got = waitState(t, h.srv, d.ID, structs.AllocClientFailed)
	if got.ClientDescription != "instance disappeared from the hypervisor" {
		t.Fatalf("reported %+v", got)
	}
	if n := h.fake.Calls("Spawn"); n != 3 {
		t.Fatalf("%d spawns: a vanished instance must not be rebuilt here", n)
	}
}
