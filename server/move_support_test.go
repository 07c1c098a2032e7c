package server

import (
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestMovesDriversCannotCarryAreRefusedUpFront: on a host whose driver
// hands no disks over (VMware, Ironic) a cold migration or a resize to
// another host is a 409 before anything starts, a resize that may stay
// in place is pinned to the host, and an evacuation of such a host is
// refused as Nova's drivers refuse it; a libvirt-like host with the
// migrate capability goes ahead.
func TestMovesDriversCannotCarryAreRefusedUpFront(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		driver    string
		caps      []string
		sameHost  bool
		migrateOK bool
		resizeOK  bool
		evacOK    bool
	}{
		{"vmware", []string{structs.HostCapabilityResize}, false, false, false, false},
		{"vmware", []string{structs.HostCapabilityResize}, true, false, true, false},
		{"ironic", nil, true, false, false, false},
		{"libvirt", []string{structs.HostCapabilityResize, structs.HostCapabilityMigrate}, false, true, true, true},
	} {
		s := testServer(t, func(cfg *Config) { cfg.AllowResizeToSameHost = c.sameHost })
		waitForLeader(t, s)
		seedFlavors(t, s)
		h := testHost("h1", 8, 16384)
		h.Status, h.Driver, h.Capabilities = structs.HostStatusUp, c.driver, c.caps
		registerHost(t, s, h)
		id := createInstances(t, s, "vm", "m1.small", 1).Instances[0].ID
		waitSettled(t, s, []string{id})
		state := s.fsm.State()
		inst, _ := state.InstanceByID(nil, id)
		check := func(op string, ok bool, tweak func(*structs.InstanceTaskEntry)) {
			t.Helper()
			e := &structs.InstanceTaskEntry{Op: op}
			if tweak != nil {
				tweak(e)
			}
			err := s.checkMoveSupported(state, inst, e)
			switch {
			case ok && err != nil:
				t.Errorf("%s (same host %v): %s refused: %v", c.driver, c.sameHost, op, err)
			case !ok && (structs.KindOf(err) != structs.KindConflict || !strings.Contains(structs.Message(err), c.driver+" driver of host hv-h1")):
				t.Errorf("%s (same host %v): %s = %v, want a 409 naming the driver", c.driver, c.sameHost, op, err)
			}
			if op == structs.OpResize && ok && c.driver == "vmware" && e.TargetHostID != "h1" {
				t.Errorf("an in-place-only resize is not pinned to its host: target %q", e.TargetHostID)
			}
		}
		check(structs.OpMigrate, c.migrateOK, nil)
		check(structs.OpResize, c.resizeOK, func(e *structs.InstanceTaskEntry) { e.AllowSameHost = c.sameHost })
		check(structs.OpEvacuate, c.evacOK, nil)
		if !c.migrateOK {
			// Through the endpoint: refused before any task starts.
			err := s.RPC("Instance.Task", &structs.InstanceTaskRequest{InstanceID: id, Op: structs.OpMigrate, Admin: true}, &structs.InstanceTaskResponse{})
			if got, _ := s.fsm.State().InstanceByID(nil, id); structs.KindOf(err) != structs.KindConflict || got.Task != nil {
				t.Errorf("%s: migrate through the endpoint = %v, task %+v", c.driver, err, got.Task)
			}
		}
	}
}
