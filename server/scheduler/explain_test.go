package scheduler

import (
	"slices"
	"testing"
)

func TestExplanation(t *testing.T) {
	cases := []struct {
		total    int
		filtered map[string]int
		want     string
	}{
		{0, nil, "0/0 hosts: no hosts registered"},
		{120, map[string]int{"not in zone az2": 40, "insufficient MEMORY_MB": 80}, "0/120 hosts: 80 insufficient MEMORY_MB, 40 not in zone az2"},
		{5, map[string]int{"host down": 2, "disabled": 2, "already tried": 1}, "0/5 hosts: 2 disabled, 2 host down, 1 already tried"},
		{1, map[string]int{"missing trait HW_GPU": 1}, "0/1 hosts: 1 missing trait HW_GPU"},
	}
	for _, c := range cases {
		if got := Explanation(c.total, c.filtered); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestReasonCounts(t *testing.T) {
	var rc reasonCounts
	for _, r := range []string{"a", "b", "a", "a"} {
		rc.add(r)
	}
	m := rc.toMap()
	if len(m) != 2 || m["a"] != 3 || m["b"] != 1 {
		t.Fatalf("counts %v", m)
	}
	rc.reset()
	if len(rc.toMap()) != 0 {
		t.Fatal("reset kept counts")
	}
}

// Filters run in Nova's order, which decides the reason a host counts
// under; the weighers are Nova's.
func TestDefaultStack(t *testing.T) {
	var filters, weighers []string
	for _, f := range DefaultFilters() {
		filters = append(filters, f.Name())
	}
	for _, w := range DefaultWeighers() {
		weighers = append(weighers, w.Name())
	}
	wantFilters := []string{"TargetHostFilter", "ComputeFilter", "RetryFilter", "ResourceFilter", "AvailabilityZoneFilter",
		"AggregateMultiTenancyIsolation", "AggregateInstanceExtraSpecsFilter",
		"ComputeCapabilitiesFilter", "MoveDestinationFilter", "ImagePropertiesFilter", "TraitsFilter",
		"SameHostFilter", "DifferentHostFilter", "ServerGroupAntiAffinityFilter", "ServerGroupAffinityFilter"}
	wantWeighers := []string{"RAMWeigher", "CPUWeigher", "DiskWeigher", "BuildFailureWeigher",
		"ServerGroupSoftAffinityWeigher", "ServerGroupSoftAntiAffinityWeigher"}
	if !slices.Equal(filters, wantFilters) || !slices.Equal(weighers, wantWeighers) {
		t.Fatalf("filters %v, weighers %v", filters, weighers)
	}
}
