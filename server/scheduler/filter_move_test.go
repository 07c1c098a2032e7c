package scheduler

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestMoveDestinationFilter(t *testing.T) {
	driver := func(name string, caps ...string) hostOpt {
		return func(h *structs.Host) { h.Driver, h.Capabilities = name, caps }
	}
	moving := testInstance("i", small())
	moving.Task = &structs.Task{Op: structs.OpMigrate, SourceHostID: "src", DiskToken: "tok"}
	inPlace := testInstance("i", small())
	inPlace.Task = &structs.Task{Op: structs.OpResize, SourceHostID: "src", TargetHostID: "src", DiskToken: "tok", AllowSameHost: true}
	runFilterCases(t, MoveDestinationFilter{}, []filterCase{
		{"libvirt takes the disks", testHost("h1", driver("libvirt", structs.HostCapabilityMigrate)), moving, true, ""},
		{"vmware cannot", testHost("h2", driver("vmware", structs.HostCapabilityResize)), moving, false, "driver cannot receive a moved disk"},
		{"ironic cannot", testHost("h3", driver("ironic")), moving, false, "driver cannot receive a moved disk"},
		{"no driver named", testHost("h4"), moving, true, ""},
	})
	for name, inst := range map[string]*structs.Instance{"a boot": testInstance("i", small()), "a resize in place": inPlace} {
		if (MoveDestinationFilter{}).applies(mustRequest(t, inst)) {
			t.Errorf("MoveDestinationFilter applies to %s", name)
		}
	}
	if !(MoveDestinationFilter{}).applies(mustRequest(t, moving)) {
		t.Error("MoveDestinationFilter does not apply to a cold migration")
	}
}
