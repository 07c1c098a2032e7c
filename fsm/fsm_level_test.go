package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestEveryAppliedMessageTypeHasAnFSMLevel checks that every message type
// the FSM applies is in the level table (structs/fsm_level.go), so that
// the leader can tell whether every server knows it before proposing it:
// a type added without a level would stop servers that are not upgraded
// yet in the middle of a rolling upgrade.
func TestEveryAppliedMessageTypeHasAnFSMLevel(t *testing.T) {
	for mt := range applyHandlers {
		if _, ok := structs.MessageTypeLevel(mt); !ok {
			t.Errorf("the FSM applies %s (%d) but structs/fsm_level.go gives it no FSM level: "+
				"add it at a new level (CurrentFSMLevel+1) and gate its proposals on the leader", mt, uint8(mt))
		}
	}
	for _, mt := range structs.LevelledMessageTypes() {
		if _, ok := applyHandlers[mt]; !ok {
			t.Errorf("structs/fsm_level.go lists %s, which the FSM does not apply", mt)
		}
	}
}
