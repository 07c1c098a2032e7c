package server

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestCheckResizeDisks(t *testing.T) {
	t.Parallel()
	fl := func(root, eph int) *structs.Flavor { return &structs.Flavor{RootGB: root, EphemeralGB: eph} }
	for _, c := range []struct {
		cur, next *structs.Flavor
		want      string
	}{
		{fl(1, 0), fl(2, 0), ""},
		{fl(2, 1), fl(2, 1), ""},
		{fl(0, 0), fl(5, 0), ""},
		{fl(0, 0), fl(0, 0), ""},
		{nil, fl(1, 0), ""},
		{fl(20, 0), fl(1, 0), msgResizeDiskDown},
		{fl(2, 2), fl(4, 1), msgResizeDiskDown},
		{fl(20, 0), fl(0, 0), msgResizeZeroDisk},
	} {
		err := checkResizeDisks(c.cur, c.next)
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v → %+v: %v", c.cur, c.next, err)
			}
			continue
		}
		if structs.KindOf(err) != structs.KindInvalid || structs.Message(err) != c.want {
			t.Errorf("%+v → %+v: %v (%s), want %q", c.cur, c.next, err, structs.KindOf(err), c.want)
		}
	}
}

// TestResizeToSmallerDiskStartsNothing: the refusal comes before any
// task, evaluation or migration record.
func TestResizeToSmallerDiskStartsNothing(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	h := testHost("h1", 8, 16384)
	h.Status = structs.HostStatusUp
	registerHost(t, s, h)
	resp := createInstances(t, s, "vm", "m1.small", 1)
	id := resp.Instances[0].ID
	waitSettled(t, s, []string{id})
	before, _ := s.fsm.State().InstanceByID(nil, id)
	err := s.RPC("Instance.Task", &structs.InstanceTaskRequest{InstanceID: id, Op: structs.OpResize, FlavorID: "m1.tiny", Admin: true},
		&structs.InstanceTaskResponse{})
	if structs.KindOf(err) != structs.KindInvalid || structs.Message(err) != msgResizeDiskDown {
		t.Fatalf("resize m1.small → m1.tiny = %v, want %q", err, msgResizeDiskDown)
	}
	got, _ := s.fsm.State().InstanceByID(nil, id)
	if got.Task != nil || got.TaskState != before.TaskState || got.FlavorID != before.FlavorID {
		t.Errorf("a refused resize changed the instance: task %+v, task_state %q, flavor %s", got.Task, got.TaskState, got.FlavorID)
	}
}
