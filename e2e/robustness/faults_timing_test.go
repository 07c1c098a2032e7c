package robustness

import (
	"testing"
	"time"
)

// delayAndClockFaults are the faults on one server's timing: its RPC and
// Raft traffic delayed (both ways, or only what it sends) and its wall
// clock stepped. Each picks its target's role, the delay and the step
// with env.rng. Those the cluster was not set up for are left out.
func delayAndClockFaults(env *faultEnv) []fault {
	t, c := env.t, env.c
	var faults []fault
	if d := c.delays; d != nil {
		delay := func(name string, oneWay bool) fault {
			return fault{name, func() func() {
				p := anyServer(t, env)
				spec := &delaySpec{base: time.Duration(50+env.rng.Intn(151)) * time.Millisecond, jitter: 50 * time.Millisecond}
				recv := spec
				if oneWay {
					recv = nil
				}
				before := d.stats()
				d.delay(p.name, spec, recv)
				t.Logf("  %s sends with a delay of %s, receives with %s", p.name, spec, recv)
				return func() {
					d.clear()
					t.Logf("  delay links: %s", d.stats().since(before))
				}
			}}
		}
		faults = append(faults,
			delay("delay a server's RPC and Raft traffic both ways", false),
			delay("delay what a server sends (one way)", true))
	}
	if len(c.servers) > 0 && c.servers[0].clockFile != "" {
		faults = append(faults, fault{"step a server's wall clock", func() func() {
			p := anyServer(t, env)
			step := (1 + env.rng.Intn(10)) * 60
			if env.rng.Intn(2) == 0 {
				step = -step
			}
			if err := setClockStep(p.clockFile, step); err != nil {
				t.Errorf("step %s's clock: %v", p.name, err)
			}
			t.Logf("  %s's wall clock stepped %+d s", p.name, step)
			return func() {
				if err := setClockStep(p.clockFile, 0); err != nil {
					t.Errorf("step %s's clock back: %v", p.name, err)
				}
			}
		}})
	}
	return faults
}

// anyServer is the leader or a follower, drawn with env.rng.
func anyServer(t *testing.T, env *faultEnv) *proc {
	if env.rng.Intn(2) == 0 {
		p := leaderOf(t, env.c)
		t.Logf("  target: leader %s", p.name)
		return p
	}
	p := followerOf(t, env.c)
	t.Logf("  target: follower %s", p.name)
	return p
}
