package server

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestInstanceUpdateUserDataNeedsTheLevel: a rebuild's new user data is
// stored once every server has the FSM level that applies it; before,
// the update is refused and nothing changes.
func TestInstanceUpdateUserDataNeedsTheLevel(t *testing.T) {
	t.Parallel()
	for _, level := range []structs.FSMLevel{structs.CurrentFSMLevel, structs.FSMLevelSegments} {
		s := testServer(t, func(c *Config) { c.NumSchedulers, c.FSMLevel = -1, level })
		waitForLeader(t, s)
		seedFlavors(t, s)
		var created structs.InstanceCreateResponse
		if err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "ud", FlavorID: "1", ImageID: "cirros",
			UserData: "old"}, &created); err != nil {
			t.Fatal(err)
		}
		id := created.Instances[0].ID
		ud := "new"
		inst, err := updateInstance(s, &structs.InstanceUpdateRequest{InstanceID: id, UserData: &ud})
		if level >= structs.FSMLevelUserDataUpdate {
			if err != nil || inst.UserData != "new" {
				t.Fatalf("%s: update %v, user data %q", level, err, inst.UserData)
			}
			continue
		}
		if structs.KindOf(err) != structs.KindConflict {
			t.Fatalf("%s: update %v, want a conflict", level, err)
		}
		if got, _ := s.fsm.State().InstanceByID(nil, id); got.UserData != "old" {
			t.Fatalf("%s: a refused update changed the user data to %q", level, got.UserData)
		}
	}
}
