package client

import (
	"errors"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// coreOnly hides every optional interface of a driver and claims none.
type coreOnly struct{ virt.Driver }

func (coreOnly) Capabilities() virt.Capabilities { return virt.Capabilities{} }

// TestPauseAndSuspend runs pause→unpause and suspend→resume end to end:
// each is carried out once, reported done with the guest's power state,
// and the guest in between is left alone by power syncs and by a fresh
// desired change; a desired stop powers a suspended guest off.
func TestPauseAndSuspend(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	for _, tc := range []struct {
		do, undo     string
		power        int
		doOp, undoOp string
	}{
		{structs.ActionPause, structs.ActionUnpause, virt.PowerPaused, "Pause", "Unpause"},
		{structs.ActionSuspend, structs.ActionResume, virt.PowerSuspend, "Suspend", "Resume"},
	} {
		seq := h.srv.action(a.ID, tc.do, "")
		got := waitAction(t, h.srv, a.ID, seq)
		if got.ClientState != structs.AllocClientRunning || got.PowerState != tc.power || got.ActionError != "" {
			t.Fatalf("%s: reported %+v", tc.do, got)
		}
		if p := power(h.fake, a.InstanceID); p != tc.power {
			t.Fatalf("%s: driver power %d", tc.do, p)
		}
		// A fresh desired change must not "fix" the guest.
		idx := h.srv.setDesired(a.ID, structs.AllocDesiredRunning)
		waitFor(t, "the change to be handled", func() bool {
			st, _, _ := c.state.getAlloc(a.ID)
			return st.HandledIndex >= idx
		})
		h.waitSyncs(4)
		if p := power(h.fake, a.InstanceID); p != tc.power || h.fake.Calls("PowerOn") != 0 || h.fake.Calls(tc.undoOp) != 0 {
			t.Fatalf("%s: the guest was woken: power %d, %d PowerOn, %d %s", tc.do, p, h.fake.Calls("PowerOn"), h.fake.Calls(tc.undoOp), tc.undoOp)
		}

		seq = h.srv.action(a.ID, tc.undo, "")
		got = waitAction(t, h.srv, a.ID, seq)
		if got.ClientState != structs.AllocClientRunning || got.PowerState != virt.PowerRunning || got.ActionError != "" {
			t.Fatalf("%s: reported %+v", tc.undo, got)
		}
		h.waitSyncs(3)
		if h.fake.Calls(tc.doOp) != 1 || h.fake.Calls(tc.undoOp) != 1 {
			t.Fatalf("%d %s and %d %s calls, want one each", h.fake.Calls(tc.doOp), tc.doOp, h.fake.Calls(tc.undoOp), tc.undoOp)
		}
	}

	// Desired stopped powers a suspended guest off; a start boots it.
	seq := h.srv.action(a.ID, structs.ActionSuspend, "")
	waitAction(t, h.srv, a.ID, seq)
	h.srv.setDesired(a.ID, structs.AllocDesiredStopped)
	got := waitState(t, h.srv, a.ID, structs.AllocClientStopped)
	if got.PowerState != virt.PowerShutdown || power(h.fake, a.InstanceID) != virt.PowerShutdown {
		t.Fatalf("stop of a suspended guest: %+v", got)
	}
	h.srv.setDesired(a.ID, structs.AllocDesiredRunning)
	if got := waitState(t, h.srv, a.ID, structs.AllocClientRunning); got.PowerState != virt.PowerRunning {
		t.Fatalf("start: %+v", got)
	}
}

// TestRescueUnrescue: a rescue boots the rescue image, an unrescue ends
// it; a stopped instance's rescue boots it and it stays up (not powered
// off for being desired stopped, even across a restart) until unrescued.
func TestRescueUnrescue(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)

	seq := h.srv.action(a.ID, structs.ActionRescue, "rescue-img")
	got := waitAction(t, h.srv, a.ID, seq)
	if got.ClientState != structs.AllocClientRunning || got.PowerState != virt.PowerRunning || got.ActionError != "" {
		t.Fatalf("rescue: reported %+v", got)
	}
	if rescued, img, _ := h.fake.Rescued(a.InstanceID); !rescued || img != "rescue-img" {
		t.Fatalf("rescue: rescued %v from %q", rescued, img)
	}
	seq = h.srv.action(a.ID, structs.ActionUnrescue, "")
	if got := waitAction(t, h.srv, a.ID, seq); got.ActionError != "" || got.PowerState != virt.PowerRunning {
		t.Fatalf("unrescue: reported %+v", got)
	}
	if rescued, _, _ := h.fake.Rescued(a.InstanceID); rescued {
		t.Fatal("still rescued after unrescue")
	}

	// A rescue image with hw_rescue_device/hw_rescue_bus is a stable
	// rescue: the driver is told the layout.
	h.srv.mu.Lock()
	h.srv.images = map[string]*structs.Image{"stable-img": {ID: "stable-img",
		Properties: map[string]string{virt.PropRescueDevice: "cdrom", virt.PropRescueBus: "sata"}}}
	h.srv.mu.Unlock()
	seq = h.srv.action(a.ID, structs.ActionRescue, "stable-img")
	if got := waitAction(t, h.srv, a.ID, seq); got.ActionError != "" {
		t.Fatalf("stable rescue: reported %+v", got)
	}
	if dev, bus, _ := h.fake.RescueLayout(a.InstanceID); dev != "cdrom" || bus != "sata" {
		t.Fatalf("stable rescue laid out as %q on %q", dev, bus)
	}
	seq = h.srv.action(a.ID, structs.ActionUnrescue, "")
	waitAction(t, h.srv, a.ID, seq)

	h.srv.setDesired(a.ID, structs.AllocDesiredStopped)
	waitState(t, h.srv, a.ID, structs.AllocClientStopped)
	offs := h.fake.Calls("PowerOff")
	seq = h.srv.action(a.ID, structs.ActionRescue, "") // desired stays stopped
	got = waitAction(t, h.srv, a.ID, seq)
	if got.ClientState != structs.AllocClientRunning || got.PowerState != virt.PowerRunning || got.ActionError != "" {
		t.Fatalf("rescue of a stopped instance: reported %+v", got)
	}
	if rescued, img, _ := h.fake.Rescued(a.InstanceID); !rescued || img != "cirros" {
		t.Fatalf("rescue with no image: rescued %v from %q, want the instance's own image", rescued, img)
	}
	h.waitSyncs(4)
	shutdown(t, c)
	c = h.start()
	h.waitSyncs(4)
	if n := h.fake.Calls("PowerOff"); n != offs || power(h.fake, a.InstanceID) != virt.PowerRunning {
		t.Fatalf("the rescued guest was powered off (%d PowerOff calls, was %d)", n, offs)
	}

	// Unrescued while desired stopped, it goes back to stopped.
	seq = h.srv.action(a.ID, structs.ActionUnrescue, "")
	got = waitAction(t, h.srv, a.ID, seq)
	if got.ClientState != structs.AllocClientStopped || got.PowerState != virt.PowerShutdown || got.ActionError != "" {
		t.Fatalf("unrescue of a stopped instance: reported %+v", got)
	}
	if n := h.fake.Calls("Rescue") + h.fake.Calls("Unrescue"); n != 6 {
		t.Fatalf("%d rescue and unrescue calls, want 6", n)
	}
	st, _, _ := c.state.getAlloc(a.ID)
	if st.Rescued {
		t.Fatal("local state still says rescued")
	}
}

// TestStopEndsRescue follows the servers' flow: a rescue comes with
// desired running (a stopped instance boots into rescue, without a power
// on first), and a later stop ends the rescue and powers the guest off,
// so that the next start boots its own disk.
func TestStopEndsRescue(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	h.srv.setDesired(a.ID, structs.AllocDesiredStopped)
	waitState(t, h.srv, a.ID, structs.AllocClientStopped)

	seq := h.srv.change(a.ID, func(x *structs.Allocation, idx uint64) {
		x.DesiredState = structs.AllocDesiredRunning
		x.PendingAction, x.ActionArg, x.ActionSeq = structs.ActionRescue, "", idx
	})
	got := waitAction(t, h.srv, a.ID, seq)
	if got.ClientState != structs.AllocClientRunning || got.PowerState != virt.PowerRunning || got.ActionError != "" {
		t.Fatalf("rescue: reported %+v", got)
	}
	if n := h.fake.Calls("PowerOn"); n != 0 {
		t.Fatalf("%d power-ons: the rescue boots the guest itself", n)
	}

	h.srv.setDesired(a.ID, structs.AllocDesiredStopped)
	if got := waitState(t, h.srv, a.ID, structs.AllocClientStopped); got.PowerState != virt.PowerShutdown {
		t.Fatalf("stop of a rescued instance: reported %+v", got)
	}
	if rescued, _, _ := h.fake.Rescued(a.InstanceID); rescued {
		t.Fatal("the stop left the guest in rescue")
	}
	if st, _, _ := c.state.getAlloc(a.ID); st.Rescued {
		t.Fatal("local state still says rescued")
	}
	h.srv.setDesired(a.ID, structs.AllocDesiredRunning)
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	if rescued, _, _ := h.fake.Rescued(a.InstanceID); rescued || h.fake.Calls("Unrescue") != 1 {
		t.Fatalf("after the start: rescued %v, %d unrescues", rescued, h.fake.Calls("Unrescue"))
	}
}

// TestActionErrors: an action the driver lacks, an unknown one, a driver
// failure, one refused on a stopped instance: each is reported done once
// with its error, and the instance is managed as before.
func TestActionErrors(t *testing.T) {
	h := newHarness(t, fake.Config{})
	h.driver = coreOnly{h.fake}
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	for _, tc := range []struct{ action, arg, want string }{
		{structs.ActionPause, "", "fake driver does not support pause"},
		{structs.ActionResume, "", "fake driver does not support suspend"},
		{structs.ActionRescue, "", "fake driver does not support rescue"},
		{structs.ActionLiveMigrate, "hv-2", "fake driver does not support live_migrate"},
		{"frobnicate", "", `unknown action "frobnicate"`},
	} {
		seq := h.srv.action(a.ID, tc.action, tc.arg)
		got := waitAction(t, h.srv, a.ID, seq)
		if got.ActionError != tc.want || got.ClientState != structs.AllocClientRunning || got.PowerState != virt.PowerRunning {
			t.Fatalf("%s: reported %+v, want error %q", tc.action, got, tc.want)
		}
	}
	if !errors.Is(&unsupportedError{"fake", "pause"}, virt.ErrNotSupported) {
		t.Fatal("unsupportedError does not wrap virt.ErrNotSupported")
	}

	h.driver = h.fake
	shutdown(t, c)
	c = h.start()
	h.fake.FailNext("Pause", errors.New("qemu says no"))
	seq := h.srv.action(a.ID, structs.ActionPause, "")
	if got := waitAction(t, h.srv, a.ID, seq); !strings.Contains(got.ActionError, "qemu says no") || got.ClientState != structs.AllocClientRunning {
		t.Fatalf("failed pause: reported %+v", got)
	}
	seq = h.srv.action(a.ID, structs.ActionLiveMigrate, "")
	if got := waitAction(t, h.srv, a.ID, seq); got.ActionError != "no destination given" {
		t.Fatalf("live migration without a destination: reported %+v", got)
	}

	h.srv.setDesired(a.ID, structs.AllocDesiredStopped)
	waitState(t, h.srv, a.ID, structs.AllocClientStopped)
	seq = h.srv.action(a.ID, structs.ActionPause, "")
	if got := waitAction(t, h.srv, a.ID, seq); got.ActionError != "instance is stopped" || got.ClientState != structs.AllocClientStopped {
		t.Fatalf("pause of a stopped instance: reported %+v", got)
	}
	seq = h.srv.action(a.ID, structs.ActionRebootHard, "")
	if got := waitAction(t, h.srv, a.ID, seq); got.ActionError != "" {
		t.Fatalf("reboot of a stopped instance: reported %+v, want it done quietly", got)
	}
	h.waitSyncs(3)
	if h.fake.Calls("Pause") != 1 || h.fake.Calls("Reboot") != 0 || h.fake.Calls("LiveMigrate") != 0 {
		t.Fatalf("driver calls: %d Pause, %d Reboot, %d LiveMigrate", h.fake.Calls("Pause"), h.fake.Calls("Reboot"), h.fake.Calls("LiveMigrate"))
	}
	_ = c
}

// TestActionsNotRepeatedAfterRestart: an action whose report was lost to
// a restart is reported by the next agent, error included, and never
// carried out again.
func TestActionsNotRepeatedAfterRestart(t *testing.T) {
	h := newHarness(t, fake.Config{})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	for _, tc := range []struct {
		action, op string
		fail       error
		power      int
	}{
		{structs.ActionPause, "Pause", nil, virt.PowerPaused},
		{structs.ActionUnpause, "Unpause", errors.New("guest is wedged"), virt.PowerPaused},
	} {
		h.srv.failNext("Alloc.UpdateFromClient", 1<<30)
		if tc.fail != nil {
			h.fake.FailNext(tc.op, tc.fail)
		}
		seq := h.srv.action(a.ID, tc.action, "")
		waitFor(t, "the action to be recorded locally", func() bool {
			st, _, _ := c.state.getAlloc(a.ID)
			return st.ActionDoneSeq == seq
		})
		shutdown(t, c)
		h.srv.mu.Lock()
		h.srv.fail = map[string]int{}
		h.srv.mu.Unlock()

		c = h.start()
		got := waitAction(t, h.srv, a.ID, seq)
		wantErr := ""
		if tc.fail != nil {
			wantErr = tc.fail.Error()
		}
		if !strings.Contains(got.ActionError, wantErr) || (wantErr == "") != (got.ActionError == "") || got.PowerState != tc.power {
			t.Fatalf("%s: reported %+v after the restart", tc.action, got)
		}
		h.waitSyncs(4)
		if n := h.fake.Calls(tc.op); n != 1 {
			t.Fatalf("%d %s calls, want 1", n, tc.op)
		}
	}
}
