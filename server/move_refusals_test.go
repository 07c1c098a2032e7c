package server

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// TestMoveRefusalsInNovasWords: a move onto the instance's own host is
// refused (400) as Nova words it per operation, and a cold migration or
// resize with no other host to go to is accepted and then fails as
// Nova's conductor fails it: the instance back where it was, the
// migration in error, the action's event saying Nova's NoValidHost.
func TestMoveRefusalsInNovasWords(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	h := testHost("h1", 8, 16384)
	h.Status = structs.HostStatusUp
	h.Capabilities = []string{structs.HostCapabilityLiveMigrate}
	registerHost(t, s, h)
	id := createInstances(t, s, "vm", "m1.small", 1).Instances[0].ID
	flavorID := waitSettled(t, s, []string{id})[id].FlavorID
	var allocs structs.AllocListResponse
	if err := s.RPC("Alloc.List", &structs.AllocListRequest{InstanceID: id}, &allocs); err != nil || len(allocs.Allocs) != 1 {
		t.Fatalf("allocs %v %v", allocs.Allocs, err)
	}
	if err := s.RPC("Alloc.UpdateFromClient", &structs.AllocUpdateRequest{HostID: "h1", Updates: []*structs.AllocClientUpdate{
		{AllocID: allocs.Allocs[0].ID, ClientState: structs.AllocClientRunning, PowerState: structs.PowerRunning}}}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	task := func(op, target, flavor string) error {
		return s.RPC("Instance.Task", &structs.InstanceTaskRequest{InstanceID: id, Op: op, TargetHost: target, FlavorID: flavor, Admin: true},
			&structs.InstanceTaskResponse{})
	}
	for _, c := range []struct{ op, want string }{
		{structs.OpMigrate, "Cannot migrate to the host where the server exists."},
		{structs.OpLiveMigrate, fmt.Sprintf("Unable to migrate instance (%s) to current host (hv-h1).", id)},
	} {
		if err := task(c.op, "hv-h1", ""); structs.KindOf(err) != structs.KindInvalid || structs.Message(err) != c.want {
			t.Errorf("%s to its own host: %v (%s), want %q", c.op, err, structs.KindOf(err), c.want)
		}
	}

	for _, c := range []struct{ op, flavor, want string }{
		{structs.OpMigrate, "", "No valid host was found. No valid host found for cold migrate"},
		{structs.OpResize, "m1.medium", "No valid host was found. No valid host found for resize"},
	} {
		if err := task(c.op, "", c.flavor); err != nil {
			t.Fatalf("%s: %v", c.op, err)
		}
		var ev *structs.InstanceActionEvent
		waitFor(t, c.op+" to fail", 30*time.Second, func() error {
			inst, err := s.fsm.State().InstanceByID(nil, id)
			if err != nil || inst.Task != nil {
				return fmt.Errorf("task %+v, %v", inst.Task, err)
			}
			var acts structs.InstanceActionListResponse
			if err := s.RPC("Instance.Actions", &structs.InstanceActionListRequest{InstanceID: id}, &acts); err != nil {
				return err
			}
			if len(acts.Actions) == 0 || acts.Actions[0].Action != c.op || len(acts.Actions[0].Events) == 0 {
				return errors.New("no action yet")
			}
			ev = acts.Actions[0].Events[0]
			return nil
		})
		if ev.Event != "conductor_migrate_server" || ev.Result != structs.EventError || ev.Details != c.want {
			t.Errorf("%s with no other host: event %+v, want %q", c.op, ev, c.want)
		}
		inst, _ := s.fsm.State().InstanceByID(nil, id)
		if inst.VMState != structs.VMStateActive || inst.HostID != "h1" || inst.FlavorID != flavorID {
			t.Errorf("after the failed %s: vm_state %s on %s with %s", c.op, inst.VMState, inst.HostID, inst.FlavorID)
		}
	}
}
