package scheduler

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestComputeFilter(t *testing.T) {
	inst := testInstance("i", small())
	status := func(s string) hostOpt { return func(h *structs.Host) { h.Status = s } }
	disabled := func(h *structs.Host) { h.Enabled = false; h.DisabledReason = "maintenance" }
	runFilterCases(t, ComputeFilter{}, []filterCase{
		{"up and enabled", testHost("h"), inst, true, ""},
		{"down", testHost("h", status(structs.HostStatusDown)), inst, false, "host down"},
		{"initializing", testHost("h", status(structs.HostStatusInit)), inst, false, "host down"},
		{"disabled", testHost("h", disabled), inst, false, "disabled"},
		{"down and disabled", testHost("h", status(structs.HostStatusDown), disabled), inst, false, "host down"},
	})
}
