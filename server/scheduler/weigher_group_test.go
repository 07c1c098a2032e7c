package scheduler

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestServerGroupSoftWeighers(t *testing.T) {
	topo := withGroup(emptyTopology(), "soft", structs.PolicySoftAffinity, 0, map[string]int{"a": 2, "b": 1})
	withGroup(topo, "anti", structs.PolicySoftAntiAffinity, 0, map[string]int{"a": 2, "b": 1})
	withGroup(topo, "hard", structs.PolicyAntiAffinity, 0, map[string]int{"a": 2})
	cases := []struct {
		w     Weigher
		group string
		host  string
		want  float64
	}{
		{ServerGroupSoftAffinityWeigher{}, "soft", "a", 2},
		{ServerGroupSoftAffinityWeigher{}, "soft", "c", 0},
		{ServerGroupSoftAffinityWeigher{}, "anti", "a", 0},
		{ServerGroupSoftAntiAffinityWeigher{}, "anti", "a", -2},
		{ServerGroupSoftAntiAffinityWeigher{}, "anti", "b", -1},
		{ServerGroupSoftAntiAffinityWeigher{}, "soft", "a", 0},
		{ServerGroupSoftAntiAffinityWeigher{}, "hard", "a", 0},
		{ServerGroupSoftAntiAffinityWeigher{}, "", "a", 0},
	}
	for _, c := range cases {
		req, _ := boundRequest(t, topo, inGroup("i", c.group))
		if got := c.w.Weigh(NewHostView(testHost(c.host)), req); got != c.want {
			t.Errorf("%s group %q host %s: %v, want %v", c.w.Name(), c.group, c.host, got, c.want)
		}
	}
	// Unbound requests weigh nothing.
	if got := (ServerGroupSoftAffinityWeigher{}).Weigh(NewHostView(testHost("a")), mustRequest(t, inGroup("i", "soft"))); got != 0 {
		t.Fatalf("unbound %v", got)
	}
	cfg := Config{SoftAffinityWeightMultiplier: 2, SoftAntiAffinityWeightMultiplier: 3}
	if (ServerGroupSoftAffinityWeigher{}).Multiplier(cfg) != 2 || (ServerGroupSoftAntiAffinityWeigher{}).Multiplier(cfg) != 3 {
		t.Fatal("multipliers")
	}
	if d := DefaultConfig(); d.SoftAffinityWeightMultiplier != 1 || d.SoftAntiAffinityWeightMultiplier != 1 {
		t.Fatalf("Nova's defaults are 1.0: %+v", d)
	}
}

func TestSoftAntiAffinityAvoidsMembersHosts(t *testing.T) {
	// With the resource weighers off, the members decide.
	cfg := Config{SoftAntiAffinityWeightMultiplier: 1}
	topo := withGroup(emptyTopology(), "g", structs.PolicySoftAntiAffinity, 0, map[string]int{"a": 1, "b": 1})
	hosts := []*structs.Host{testHost("a"), testHost("b"), testHost("c")}
	plan, err := Schedule(topoState{hosts, topo}, &structs.Evaluation{ID: "e"}, []*structs.Instance{inGroup("i1", "g"), inGroup("i2", "g")}, cfg, newRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	if got := hostsOf(plan); len(got) != 2 || got[0] != "c" {
		t.Fatalf("placed on %v", got)
	}
}
