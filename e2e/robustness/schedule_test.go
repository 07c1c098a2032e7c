package robustness

import (
	"math/rand"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// faultEnv is what the faults act on; net and disk are nil when the
// machine cannot inject those faults (and CI=true is not set).
type faultEnv struct {
	t     *testing.T
	start time.Time // the histories' time origin, for the fault log
	c     *cluster
	net   *netFaults
	disk  *smallDisk
	// rng draws the faults' own choices (a target's role, a delay, a
	// step), from the run's seed; only the schedule's goroutine uses it.
	rng *rand.Rand
}

type fault struct {
	name   string
	inject func() (heal func())
}

// runSeed is the seed of the run's random choices (fault order and
// targets' roles, each worker's operations), from STRATUS_ROBUSTNESS_SEED
// when set. Timing is not replayed: the same seed gives the same choices,
// not the same interleaving.
func runSeed(t *testing.T) int64 {
	seed := time.Now().UnixNano()
	if v := os.Getenv("STRATUS_ROBUSTNESS_SEED"); v != "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("STRATUS_ROBUSTNESS_SEED: %v", err)
		}
		seed = s
	}
	t.Logf("seed %d (replay with STRATUS_ROBUSTNESS_SEED=%d)", seed, seed)
	return seed
}

// buildFaults lists the faults this machine can inject.
func buildFaults(env *faultEnv) []fault {
	t, c := env.t, env.c
	// Name each fault's target in the log, to read a failure against.
	leaderOf := func(t *testing.T, c *cluster) *proc {
		p := leaderOf(t, c)
		t.Logf("  target: leader %s", p.name)
		return p
	}
	followerOf := func(t *testing.T, c *cluster) *proc {
		p := followerOf(t, c)
		t.Logf("  target: follower %s", p.name)
		return p
	}
	faults := []fault{
		{"SIGKILL and restart the leader", func() func() { return killAndRestart(t, leaderOf(t, c)) }},
		{"SIGKILL and restart a follower", func() func() { return killAndRestart(t, followerOf(t, c)) }},
		{"SIGKILL and restart a client agent", func() func() { return killAndRestart(t, c.clients[0]) }},
		{"SIGKILL a follower, drop the tail of its Raft log, restart it", func() func() {
			p := followerOf(t, c)
			p.kill()
			from, to, err := truncateRaftTail(p.dataDir, 5)
			if err != nil {
				t.Errorf("truncate %s's Raft log: %v", p.name, err)
			} else {
				t.Logf("dropped entries %d-%d of %s's Raft log", from, to, p.name)
			}
			return func() { p.start(t) }
		}},
		{"SIGSTOP/SIGCONT the leader", func() func() {
			p := leaderOf(t, c)
			p.signal(syscall.SIGSTOP)
			return func() { p.signal(syscall.SIGCONT) }
		}},
	}
	if n := env.net; n != nil {
		netFault := func(name string, cut func() error) fault {
			return fault{name, func() func() {
				if err := cut(); err != nil {
					t.Errorf("%s: %v", name, err)
				}
				return func() {
					if err := n.heal(); err != nil {
						t.Errorf("%v", err)
					}
				}
			}}
		}
		faults = append(faults,
			netFault("partition a follower", func() error { return n.isolate(followerOf(t, c)) }),
			netFault("partition the leader from the majority", func() error { return n.isolate(leaderOf(t, c)) }),
			netFault("the leader's packets are dropped, it hears the others (asymmetric)", func() error { return n.mute(leaderOf(t, c)) }),
			netFault("no one reaches the leader, its own connections work (asymmetric)", func() error { return n.deafen(leaderOf(t, c)) }),
			netFault("cut the leader from one follower only (partial)", func() error { return n.cut(leaderOf(t, c), followerOf(t, c)) }),
			netFault("servers lose 30% of their packets", func() error { return n.lose(c.servers, 30) }),
		)
	}
	faults = append(faults, delayAndClockFaults(env)...)
	if d := env.disk; d != nil {
		faults = append(faults, fault{"fill s3's disk", func() func() {
			if err := d.fill(); err != nil {
				t.Errorf("fill disk: %v", err)
			}
			return func() {
				if err := d.free(); err != nil {
					t.Errorf("free disk: %v", err)
				}
			}
		}})
	}
	return faults
}

// runSchedule injects faults until the duration has passed and every
// fault has run once: first each fault in an order drawn from rng, then
// faults drawn at random. Each lasts past an election timeout and is
// followed by a quiet window once the cluster is healthy again.
func runSchedule(t *testing.T, env *faultEnv, faults []fault, rng *rand.Rand, d time.Duration) map[string]int {
	order := rng.Perm(len(faults))
	deadline := time.Now().Add(d)
	survived := map[string]int{}
	for i := 0; time.Now().Before(deadline) || i < len(faults); i++ {
		f := faults[rng.Intn(len(faults))]
		if i < len(order) {
			f = faults[order[i]]
		}
		t.Logf("at %.3fs fault: %s", time.Since(env.start).Seconds(), f.name)
		heal := f.inject()
		time.Sleep(3 * time.Second) // past an election timeout (0.5-1s)
		t.Logf("at %.3fs healing", time.Since(env.start).Seconds())
		heal()
		restartExited(t, env.c)
		waitHealthy(t, env.c)
		survived[f.name]++
		time.Sleep(1500 * time.Millisecond)
	}
	return survived
}

func killAndRestart(t *testing.T, p *proc) func() {
	p.kill()
	return func() { p.start(t) }
}
