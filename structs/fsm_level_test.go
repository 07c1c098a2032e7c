package structs

import "testing"

// TestEveryMessageTypeHasAnFSMLevel checks the level table against the
// named message types: a new type must be given the level that
// introduced it (see FSMLevel), and no level may be newer than this
// build's.
func TestEveryMessageTypeHasAnFSMLevel(t *testing.T) {
	for mt := range messageTypeNames {
		l, ok := MessageTypeLevel(mt)
		if !ok {
			t.Errorf("message type %s (%d) has no FSM level: list it in messageTypeLevels (structs/fsm_level.go); "+
				"a new mandatory type needs a new level, CurrentFSMLevel+1", mt, uint8(mt))
			continue
		}
		if l < FSMLevelBase || l > CurrentFSMLevel {
			t.Errorf("message type %s is at %s, outside %s … %s", mt, l, FSMLevelBase, CurrentFSMLevel)
		}
	}
	for _, mt := range LevelledMessageTypes() {
		if _, ok := messageTypeNames[mt]; !ok {
			t.Errorf("the level table lists message type %d, which has no name", uint8(mt))
		}
		if mt&IgnoreUnknownTypeFlag != 0 {
			t.Errorf("the level table lists %s with IgnoreUnknownTypeFlag set; list the plain type", mt)
		}
	}
}

func TestRequiredFSMLevel(t *testing.T) {
	cases := []struct {
		t    MessageType
		want FSMLevel
	}{
		{InstanceCreateType, FSMLevelBase},
		{InstanceCreateBatchType, FSMLevelBatched},
		{AllocClientUpdateBatchType, FSMLevelBatched},
		{DeletedPurgeType | IgnoreUnknownTypeFlag, 0},
		{MessageType(127), CurrentFSMLevel},
	}
	for _, c := range cases {
		if got := RequiredFSMLevel(c.t); got != c.want {
			t.Errorf("RequiredFSMLevel(%s) = %d, want %d", c.t, got, c.want)
		}
	}
	if got := AdvertisedFSMLevel(0); got != FSMLevelBase {
		t.Errorf("a server that advertises no level is at %s, want %s", got, FSMLevelBase)
	}
}
