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

// TestResizeToSameHostNeedsTheLevel: allow_resize_to_same_host marks a
// resize's task only once every server has the FSM level that knows
// same-host resizes; before, the resize leaves the host as always.
func TestResizeToSameHostNeedsTheLevel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		level structs.FSMLevel
		want  bool
	}{{structs.CurrentFSMLevel, true}, {structs.FSMLevelBatched, false}} {
		s := testServer(t, func(cfg *Config) { cfg.AllowResizeToSameHost, cfg.FSMLevel = true, c.level })
		waitForLeader(t, s)
		seedFlavors(t, s)
		for _, name := range []string{"h1", "h2"} {
			// Two hosts: the move finds a destination either way, and
			// its task stays (no agent reports) for the test to read.
			h := testHost(name, 8, 16384)
			h.Status = structs.HostStatusUp
			registerHost(t, s, h)
		}
		id := createInstances(t, s, "vm", "m1.small", 1).Instances[0].ID
		inst := waitSettled(t, s, []string{id})[id]
		var allocs structs.AllocListResponse
		if err := s.RPC("Alloc.List", &structs.AllocListRequest{InstanceID: id}, &allocs); err != nil || len(allocs.Allocs) != 1 {
			t.Fatalf("allocs %v %v", allocs.Allocs, err)
		}
		err := s.RPC("Alloc.UpdateFromClient", &structs.AllocUpdateRequest{HostID: inst.HostID, Updates: []*structs.AllocClientUpdate{
			{AllocID: allocs.Allocs[0].ID, ClientState: structs.AllocClientRunning, PowerState: structs.PowerRunning}}}, &structs.GenericResponse{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RPC("Instance.Task", &structs.InstanceTaskRequest{InstanceID: id, Op: structs.OpResize, FlavorID: "m1.medium", Admin: true},
			&structs.InstanceTaskResponse{}); err != nil {
			t.Fatalf("%s: %v", c.level, err)
		}
		got, _ := s.fsm.State().InstanceByID(nil, id)
		if got.Task == nil || got.Task.AllowSameHost != c.want {
			t.Errorf("%s: task %+v, want AllowSameHost %v", c.level, got.Task, c.want)
		}
	}
}
