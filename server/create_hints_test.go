package server

import (
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestCreateKeepsEveryHintOnceTheLevelAllows: the hints the scheduler
// does not act on are kept on the instance (for 2.100's view) once every
// server has the FSM level that stores them; before, all servers drop
// them alike, and a create with only such hints has none.
func TestCreateKeepsEveryHintOnceTheLevelAllows(t *testing.T) {
	t.Parallel()
	other := map[string][]string{"cidr": {"/24"}, "query": {`[">=","$free_ram_mb",1]`}}
	for _, level := range []structs.FSMLevel{structs.CurrentFSMLevel, structs.FSMLevelSegments} {
		s := testServer(t, func(c *Config) { c.NumSchedulers, c.FSMLevel = -1, level })
		waitForLeader(t, s)
		seedFlavors(t, s)
		var created structs.InstanceCreateResponse
		if err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "h", FlavorID: "1", ImageID: "cirros",
			Hints: &structs.SchedulerHints{Other: other}}, &created); err != nil {
			t.Fatal(err)
		}
		inst, err := s.fsm.State().InstanceByID(nil, created.Instances[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if level >= structs.FSMLevelAllHints {
			if inst.Hints == nil || !reflect.DeepEqual(inst.Hints.Other, other) {
				t.Fatalf("%s: hints %+v, want %v kept", level, inst.Hints, other)
			}
			continue
		}
		if inst.Hints != nil {
			t.Fatalf("%s: hints %+v kept before every server can apply them", level, inst.Hints)
		}
	}
	s := testServer(t, func(c *Config) { c.NumSchedulers = -1 })
	waitForLeader(t, s)
	seedFlavors(t, s)
	big := map[string][]string{}
	for i := range structs.MaxOtherHints + 1 {
		big[string(rune('a'+i%26))+string(rune('a'+i/26))] = []string{"v"}
	}
	err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "h", FlavorID: "1", ImageID: "cirros",
		Hints: &structs.SchedulerHints{Other: big}}, &structs.InstanceCreateResponse{})
	if structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("%d hints: %v, want invalid", len(big), err)
	}
}
