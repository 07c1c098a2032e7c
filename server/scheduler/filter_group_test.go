package scheduler

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// topoState is a State with a topology, as the worker's adapter is.
type topoState struct {
	hosts []*structs.Host
	topo  *Topology
}

func (s topoState) Hosts() ([]*structs.Host, error) { return s.hosts, nil }
func (s topoState) Topology([]*structs.Instance) (*Topology, error) {
	return s.topo, nil
}

func emptyTopology() *Topology {
	return &Topology{DefaultZone: "nova", HostZones: map[string]string{}, HostAggregates: map[string][]*structs.Aggregate{},
		Groups: map[string]*GroupPlacement{}, InstanceHosts: map[string][]string{}}
}

func withGroup(topo *Topology, id, policy string, maxPerHost int, hosts map[string]int) *Topology {
	topo.Groups[id] = &GroupPlacement{Group: &structs.ServerGroup{ID: id, Policy: policy, MaxServerPerHost: maxPerHost}, Hosts: hosts}
	return topo
}

// boundRequest is a request bound to topo, as Schedule binds it.
func boundRequest(t *testing.T, topo *Topology, inst *structs.Instance) (*Request, *placement) {
	t.Helper()
	req := mustRequest(t, inst)
	p := newPlacement(topo)
	p.bind(req)
	return req, p
}

func inGroup(id, group string) *structs.Instance {
	inst := testInstance(id, small())
	inst.ServerGroupID = group
	return inst
}

func TestServerGroupAntiAffinityFilter(t *testing.T) {
	topo := withGroup(emptyTopology(), "g", structs.PolicyAntiAffinity, 0, map[string]int{"a": 1})
	withGroup(topo, "g2", structs.PolicyAntiAffinity, 2, map[string]int{"a": 1, "b": 2})
	withGroup(topo, "soft", structs.PolicySoftAntiAffinity, 0, map[string]int{"a": 5})
	f := ServerGroupAntiAffinityFilter{}
	for _, c := range []struct {
		group, host string
		ok          bool
	}{
		{"g", "a", false}, {"g", "b", true},
		{"g2", "a", true}, {"g2", "b", false}, {"g2", "c", true},
		{"soft", "a", true}, {"", "a", true}, {"gone", "a", true},
	} {
		req, _ := boundRequest(t, topo, inGroup("i", c.group))
		ok, reason := f.Filter(NewHostView(testHost(c.host)), req)
		if ok != c.ok || (!ok && reason != "server group anti-affinity") {
			t.Errorf("group %q host %s: (%v, %q), want %v", c.group, c.host, ok, reason, c.ok)
		}
		if f.applies(req) != (c.group == "g" || c.group == "g2") {
			t.Errorf("group %q: applies %v", c.group, f.applies(req))
		}
	}
	// Without a topology nothing is known, so nothing is refused.
	if f.applies(mustRequest(t, inGroup("i", "g"))) {
		t.Fatal("applies without a topology")
	}
}

func TestServerGroupAffinityFilter(t *testing.T) {
	topo := withGroup(emptyTopology(), "g", structs.PolicyAffinity, 0, map[string]int{"a": 2})
	withGroup(topo, "new", structs.PolicyAffinity, 0, map[string]int{})
	f := ServerGroupAffinityFilter{}
	for _, c := range []struct {
		group, host string
		ok          bool
	}{
		{"g", "a", true}, {"g", "b", false}, {"new", "a", true}, {"new", "b", true},
	} {
		req, _ := boundRequest(t, topo, inGroup("i", c.group))
		if ok, reason := f.Filter(NewHostView(testHost(c.host)), req); ok != c.ok || (!ok && reason != "server group affinity") {
			t.Errorf("group %q host %s: (%v, %q), want %v", c.group, c.host, ok, reason, c.ok)
		}
	}
	// A group's first placement in a plan pins the rest of it.
	req, p := boundRequest(t, topo, inGroup("i1", "new"))
	p.record(req, "b")
	next := mustRequest(t, inGroup("i2", "new"))
	p.bind(next)
	if ok, _ := f.Filter(NewHostView(testHost("a")), next); ok {
		t.Fatal("second member may go elsewhere")
	}
	if ok, _ := f.Filter(NewHostView(testHost("b")), next); !ok {
		t.Fatal("second member may not join the first")
	}
}

func TestScheduleKeepsGroupsApartAndTogether(t *testing.T) {
	hosts := []*structs.Host{testHost("a"), testHost("b"), testHost("c")}
	cfg := DefaultConfig()
	group := func(policy string, maxPerHost int, members map[string]int, n int) *structs.Plan {
		t.Helper()
		topo := withGroup(emptyTopology(), "g", policy, maxPerHost, members)
		insts := instances(n, small())
		for _, i := range insts {
			i.ServerGroupID = "g"
		}
		eval := &structs.Evaluation{ID: "e"}
		plan, err := Schedule(topoState{hosts, topo}, eval, insts, cfg, newRNG(1))
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	// Anti-affinity: three on three hosts, the fourth has nowhere to go.
	plan := group(structs.PolicyAntiAffinity, 0, map[string]int{}, 4)
	if got := hostsOf(plan); len(got) != 3 || got[0] == got[1] || got[1] == got[2] || got[0] == got[2] {
		t.Fatalf("anti-affinity placed on %v", got)
	}
	if len(plan.Failures) != 1 || !strings.Contains(plan.Failures[0].Explanation, "3 server group anti-affinity") {
		t.Fatalf("failures %+v", plan.Failures)
	}
	// max_server_per_host 2 with a member already on a: 5 fit.
	plan = group(structs.PolicyAntiAffinity, 2, map[string]int{"a": 1}, 6)
	count := map[string]int{}
	for _, h := range hostsOf(plan) {
		count[h]++
	}
	if !reflect.DeepEqual(count, map[string]int{"a": 1, "b": 2, "c": 2}) || len(plan.Failures) != 1 {
		t.Fatalf("max 2 per host placed %v", count)
	}
	// Affinity: all on the member's host, even against the RAM weigher.
	plan = group(structs.PolicyAffinity, 0, map[string]int{"c": 1}, 3)
	if got := hostsOf(plan); !reflect.DeepEqual(got, []string{"c", "c", "c"}) {
		t.Fatalf("affinity placed on %v", got)
	}
	plan = group(structs.PolicyAffinity, 0, map[string]int{}, 3)
	if got := hostsOf(plan); got[0] != got[1] || got[1] != got[2] {
		t.Fatalf("new affinity group placed on %v", got)
	}
	// Soft anti-affinity spreads without refusing; soft affinity packs
	// when its weigher outweighs the spreading resource weighers (as in
	// Nova, each of those counts as much as it by default).
	plan = group(structs.PolicySoftAntiAffinity, 0, map[string]int{}, 4)
	if len(plan.Placements) != 4 || len(plan.Failures) != 0 {
		t.Fatalf("soft anti-affinity %+v", plan)
	}
	cfg.SoftAffinityWeightMultiplier = 10
	plan = group(structs.PolicySoftAffinity, 0, map[string]int{"b": 1}, 2)
	if got := hostsOf(plan); !reflect.DeepEqual(got, []string{"b", "b"}) {
		t.Fatalf("soft affinity placed on %v", got)
	}
}
