package gossip

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestConfigOverridesTimers checks that PushPullInterval and
// RetransmitMult replace the chosen timers' values only when set.
func TestConfigOverridesTimers(t *testing.T) {
	for _, fast := range []bool{true, false} {
		def := Config{NodeName: "n", Fast: fast, Logger: hclog.NewNullLogger()}.memberlistConfig()
		if fast && (def.PushPullInterval != 5*time.Second || def.RetransmitMult != 2) {
			t.Errorf("Fast defaults: push/pull %v, retransmit %d; want 5s, 2", def.PushPullInterval, def.RetransmitMult)
		}
		if !fast && (def.PushPullInterval != 30*time.Second || def.RetransmitMult != 4) {
			t.Errorf("LAN defaults: push/pull %v, retransmit %d; want 30s, 4", def.PushPullInterval, def.RetransmitMult)
		}
		c := Config{NodeName: "n", Fast: fast, Logger: hclog.NewNullLogger(), PushPullInterval: time.Minute,
			RetransmitMult: 1}.memberlistConfig()
		if c.PushPullInterval != time.Minute || c.RetransmitMult != 1 {
			t.Errorf("fast=%v overrides: push/pull %v, retransmit %d; want 1m0s, 1", fast, c.PushPullInterval, c.RetransmitMult)
		}
		if c.ProbeInterval != def.ProbeInterval || c.SuspicionMult != def.SuspicionMult {
			t.Errorf("fast=%v: overrides changed the probe timers", fast)
		}
	}
}
