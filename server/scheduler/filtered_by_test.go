package scheduler

import (
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestPlacementFailureFilteredBy: a failure counts the hosts each filter
// rejected by the filter's name, whatever its reasons say (zone names,
// traits), for the placement-failure metrics.
func TestPlacementFailureFilteredBy(t *testing.T) {
	full := withUsage(structs.ResourceMemoryMB, 30000)
	hosts := []*structs.Host{
		testHost("d1", withAZ("az2"), func(h *structs.Host) { h.Status = structs.HostStatusDown }),
		testHost("m1", withAZ("az2"), full),
		testHost("m2", withAZ("az2"), full),
		testHost("z1", withAZ("az1")),
		testHost("z2", withAZ("az3")),
	}
	inst := testInstance("i0", testFlavor(2, 8192, 20, ""))
	inst.AZ = "az2"
	plan := schedule(t, hosts, DefaultConfig(), 1, inst)
	if len(plan.Failures) != 1 {
		t.Fatalf("plan %+v", plan)
	}
	want := map[string]int{"ComputeFilter": 1, "ResourceFilter": 2, "AvailabilityZoneFilter": 2}
	if got := plan.Failures[0].FilteredBy; !reflect.DeepEqual(got, want) {
		t.Errorf("FilteredBy %v, want %v", got, want)
	}
}
