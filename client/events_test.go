package client

import (
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// TestDriverEventsWakeTheRunner: with the power sync an hour away, a
// guest that shuts itself down is still reported stopped at once,
// because the fake reports the change on its event channel.
func TestDriverEventsWakeTheRunner(t *testing.T) {
	h := newHarness(t, fake.Config{})
	h.tweak = func(c *Config) { c.PowerSyncInterval = time.Hour }
	c := h.start()
	allocs := h.srv.addAllocs(c.HostID(), 2)
	for _, a := range allocs {
		waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	}
	a, b := allocs[0], allocs[1]
	if err := h.fake.SetPowerState(a.InstanceID, virt.PowerShutdown); err != nil {
		t.Fatal(err)
	}
	got := waitState(t, h.srv, a.ID, structs.AllocClientStopped)
	if got.PowerState != structs.PowerShutdown {
		t.Fatalf("reported %+v", got)
	}
	if err := h.fake.SetPowerState(b.InstanceID, virt.PowerPaused); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pause to be reported", func() bool {
		return h.srv.alloc(b.ID).PowerState == structs.PowerPaused
	})
	// An event about an instance no runner manages is ignored.
	if _, err := h.fake.Spawn(t.Context(), &virt.InstanceSpec{ID: "stranger", VCPUs: 1, MemoryMB: 64}); err != nil {
		t.Fatal(err)
	}
	if err := h.fake.SetPowerState("stranger", virt.PowerShutdown); err != nil {
		t.Fatal(err)
	}
	shutdown(t, c)
}
