package scheduler

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// Reusing the candidates of equivalent requests (reuse.go) must decide
// exactly as a full pass per instance does: same hosts, same failures
// and explanations, same allocation IDs (so the same random draws), in
// evaluations that fill hosts up, mix flavors, and mix in requests that
// cannot be reused.
func TestScheduleReuseDecidesAsAFullPass(t *testing.T) {
	tiny, big := testFlavor(1, 512, 1), testFlavor(4, 8192, 40)
	avx := testFlavor(1, 512, 1, "trait:HW_CPU_X86_AVX2=required")
	// An equal flavor that is another object: still reused.
	tinyCopy := testFlavor(1, 512, 1)
	mixed := func(n int) []*structs.Instance {
		var out []*structs.Instance
		for i := range n {
			f := tiny
			switch {
			case i%17 == 5:
				f = big
			case i%23 == 7:
				f = avx
			case i%2 == 1:
				f = tinyCopy
			}
			inst := testInstance(fmt.Sprintf("i%03d", i), f)
			switch {
			case i%31 == 3:
				inst.Attempts = []*structs.BuildAttempt{{HostID: "h-001", Error: "boom"}}
			case i%37 == 11:
				inst.AZ = "az2"
			case i%41 == 13:
				inst.TargetHostID = "h-003"
			case i%43 == 17:
				inst.Hints = &structs.SchedulerHints{DifferentHost: []string{"i000"}}
			}
			out = append(out, inst)
		}
		return out
	}
	hosts := func(n int) []*structs.Host {
		out := make([]*structs.Host, n)
		for i := range out {
			opts := []hostOpt{withUsage(structs.ResourceMemoryMB, int64(i*997%20000))}
			if i%3 == 0 {
				opts = append(opts, withAZ("az2"), withTraits("HW_CPU_X86_AVX2"))
			}
			if i%5 == 0 {
				// Room for exactly two tiny: the host drops out mid-run.
				opts = append(opts, withUsage(structs.ResourceMemoryMB, 32768-512-1024))
			}
			out[i] = testHost(fmt.Sprintf("h-%03d", i), opts...)
			out[i].BuildFailures = i % 7 / 6
		}
		return out
	}
	configs := map[string]Config{"default": DefaultConfig()}
	subset := DefaultConfig()
	subset.HostSubsetSize = 3
	configs["subset=3"] = subset
	pack := DefaultConfig()
	pack.RAMWeightMultiplier, pack.CPUWeightMultiplier = -1, 0
	configs["pack"] = pack
	cases := []struct {
		name  string
		hosts int
		insts []*structs.Instance
	}{
		{"identical", 20, instances(60, tiny)},
		{"mixed", 30, mixed(200)},
		{"more than fits", 4, instances(400, tinyCopy)},
		{"one host", 1, instances(10, big)},
	}
	for _, c := range cases {
		for name, cfg := range configs {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				state := sliceState(hosts(c.hosts))
				eval := &structs.Evaluation{ID: "eval-reuse"}
				full, err := scheduleReusing(state, eval, c.insts, cfg, newRNG(7), false)
				if err != nil {
					t.Fatal(err)
				}
				reused, err := scheduleReusing(state, eval, c.insts, cfg, newRNG(7), true)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(full, reused) {
					t.Fatalf("plans differ:\nfull:   %v %v\nreused: %v %v", hostsOf(full), len(full.Failures), hostsOf(reused), len(reused.Failures))
				}
			})
		}
	}
}

// The reuse test above would pass vacuously if nothing were reused.
func TestScheduleReusesEquivalentRequests(t *testing.T) {
	a := mustRequest(t, testInstance("a", testFlavor(1, 512, 1)))
	b := mustRequest(t, testInstance("b", testFlavor(1, 512, 1)))
	if !a.reusable() || !sameAsks(a, b) {
		t.Fatal("two instances of equal flavors are not reused")
	}
	c := mustRequest(t, testInstance("c", testFlavor(1, 1024, 1)))
	if sameAsks(a, c) {
		t.Fatal("instances of different flavors are treated alike")
	}
	tried := testInstance("d", testFlavor(1, 512, 1))
	tried.Attempts = []*structs.BuildAttempt{{HostID: "h"}}
	if mustRequest(t, tried).reusable() {
		t.Fatal("a request with tried hosts is reused")
	}
	grouped := testInstance("e", testFlavor(1, 512, 1))
	grouped.ServerGroupID = "g"
	if mustRequest(t, grouped).reusable() {
		t.Fatal("a server group member is reused")
	}
}

// A HostCache gives the plans Schedule gives, while hosts change (a
// stored host is replaced by a changed copy), are added and removed
// between calls.
func TestScheduleCachedDecidesAsSchedule(t *testing.T) {
	hosts := make([]*structs.Host, 40)
	for i := range hosts {
		hosts[i] = testHost(fmt.Sprintf("h-%03d", i), withUsage(structs.ResourceMemoryMB, int64(i*811%30000)))
	}
	cache := &HostCache{}
	insts := instances(30, testFlavor(1, 512, 1))
	eval := &structs.Evaluation{ID: "eval-cached"}
	for round := range 6 {
		want, err := Schedule(sliceState(hosts), eval, insts, DefaultConfig(), newRNG(uint64(round)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ScheduleCached(cache, sliceState(hosts), eval, insts, DefaultConfig(), newRNG(uint64(round)))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: cached plan %v differs from %v", round, hostsOf(got), hostsOf(want))
		}
		// Apply the plan as the state store would: changed copies.
		byID := map[string]int{}
		for i, h := range hosts {
			byID[h.ID] = i
		}
		for _, a := range got.Placements {
			i := byID[a.HostID]
			c := *hosts[i]
			c.Usage = map[string]int64{}
			for k, v := range hosts[i].Usage {
				c.Usage[k] = v
			}
			for k, v := range a.Resources {
				c.Usage[k] += v
			}
			hosts[i] = &c
		}
		switch round {
		case 1:
			hosts = append(hosts[:5], hosts[6:]...) // one gone
		case 3:
			hosts = append(hosts, testHost("h-999")) // one added
		}
	}
}
