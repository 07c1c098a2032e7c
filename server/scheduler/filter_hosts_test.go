package scheduler

import (
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestTargetHostFilter(t *testing.T) {
	targeted := testInstance("i", small())
	targeted.TargetHostID = "b"
	runFilterCases(t, TargetHostFilter{}, []filterCase{
		{"no target", testHost("a"), testInstance("i", small()), true, ""},
		{"the target", testHost("b"), targeted, true, ""},
		{"another host", testHost("a"), targeted, false, "not the requested host"},
	})
	if (TargetHostFilter{}).applies(mustRequest(t, testInstance("i", small()))) {
		t.Fatal("applies without a target")
	}
	// The target must still pass the other filters: a full one is a
	// NoValidHost that names both reasons.
	full := testHost("b", withUsage(structs.ResourceMemoryMB, 32256))
	plan := schedule(t, []*structs.Host{testHost("a"), full, testHost("c")}, DefaultConfig(), 1, targeted)
	if len(plan.Failures) != 1 || plan.Failures[0].Explanation != "0/3 hosts: 2 not the requested host, 1 insufficient MEMORY_MB" {
		t.Fatalf("failures %+v", plan.Failures)
	}
	plan = schedule(t, []*structs.Host{testHost("a"), testHost("b"), testHost("c")}, DefaultConfig(), 1, targeted)
	if got := hostsOf(plan); !reflect.DeepEqual(got, []string{"b"}) {
		t.Fatalf("placed on %v", got)
	}
}

func hinted(same, different []string) *structs.Instance {
	inst := testInstance("i", small())
	inst.Hints = &structs.SchedulerHints{SameHost: same, DifferentHost: different}
	return inst
}

func TestSameAndDifferentHostFilters(t *testing.T) {
	topo := emptyTopology()
	topo.InstanceHosts["x"] = []string{"a"}
	topo.InstanceHosts["y"] = []string{"b", "c"} // moving from b to c
	topo.InstanceHosts["unplaced"] = nil
	check := func(f Filter, inst *structs.Instance, host string, ok bool, reason string) {
		t.Helper()
		req, _ := boundRequest(t, topo, inst)
		gotOK, gotReason := f.Filter(NewHostView(testHost(host)), req)
		if gotOK != ok || gotReason != reason {
			t.Errorf("%s on %s: (%v, %q), want (%v, %q)", f.Name(), host, gotOK, gotReason, ok, reason)
		}
	}
	same := SameHostFilter{}
	check(same, hinted([]string{"x"}, nil), "a", true, "")
	check(same, hinted([]string{"x"}, nil), "b", false, "same_host hint")
	check(same, hinted([]string{"x", "y"}, nil), "c", true, "")
	check(same, hinted([]string{"unplaced", "nope"}, nil), "a", false, "same_host hint")
	check(same, hinted(nil, []string{"x"}), "b", true, "")
	diff := DifferentHostFilter{}
	check(diff, hinted(nil, []string{"x"}), "a", false, "different_host hint")
	check(diff, hinted(nil, []string{"x"}), "b", true, "")
	check(diff, hinted(nil, []string{"y"}), "c", false, "different_host hint")
	check(diff, hinted(nil, []string{"nope"}), "a", true, "")

	// x runs on a and y on b and c (moving): no host is left.
	hosts := []*structs.Host{testHost("a"), testHost("b"), testHost("c")}
	eval := &structs.Evaluation{ID: "e"}
	plan, err := Schedule(topoState{hosts, topo}, eval, []*structs.Instance{hinted(nil, []string{"x", "y"})}, DefaultConfig(), newRNG(1))
	if err != nil || len(plan.Failures) != 1 || plan.Failures[0].Explanation != "0/3 hosts: 3 different_host hint" {
		t.Fatalf("plan %+v %v", plan, err)
	}
	plan, err = Schedule(topoState{hosts, topo}, eval, []*structs.Instance{hinted([]string{"y"}, []string{"x"})}, DefaultConfig(), newRNG(1))
	if err != nil || len(plan.Placements) != 1 || plan.Placements[0].HostID == "a" {
		t.Fatalf("plan %+v %v", plan, err)
	}
}
