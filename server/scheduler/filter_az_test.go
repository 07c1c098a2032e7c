package scheduler

import "testing"

func TestAvailabilityZoneFilter(t *testing.T) {
	anyZone := testInstance("i", small())
	az2 := testInstance("i", small())
	az2.AZ = "az2"
	runFilterCases(t, AvailabilityZoneFilter{}, []filterCase{
		{"no zone asked", testHost("h", withAZ("az1")), anyZone, true, ""},
		{"same zone", testHost("h", withAZ("az2")), az2, true, ""},
		{"other zone", testHost("h", withAZ("az1")), az2, false, "not in zone az2"},
		{"host without zone", testHost("h", withAZ("")), az2, false, "not in zone az2"},
	})
	if (AvailabilityZoneFilter{}).applies(mustRequest(t, anyZone)) {
		t.Fatal("applies without a zone")
	}
}
