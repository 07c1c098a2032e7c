package scheduler

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestInstanceConstraints(t *testing.T) {
	inst := func(cs ...*structs.Constraint) *structs.Instance {
		i := testInstance("i", small())
		i.Constraints = cs
		return i
	}
	c := func(attr, op, value string) *structs.Constraint {
		return &structs.Constraint{Attribute: attr, Operator: op, Value: value}
	}
	runFilterCases(t, ComputeCapabilitiesFilter{}, []filterCase{
		{"arch equal", testHost("h"), inst(c("host.arch", "", "x86_64")), true, ""},
		{"arch differs", testHost("h"), inst(c("host.arch", "=", "aarch64")), false, "constraint host.arch = aarch64"},
		{"not equal", testHost("h"), inst(c("host.arch", "!=", "aarch64")), true, ""},
		{"not equal missing attribute", testHost("h"), inst(c("host.rack", "!=", "r1")), true, ""},
		{"name regexp", testHost("cmp-2"), inst(c("host.name", "regexp", "^cmp-[0-9]+$")), true, ""},
		{"name regexp no match", testHost("gpu-1"), inst(c("host.name", "regexp", "^cmp-")), false, "constraint host.name regexp ^cmp-"},
		{"version", testHost("h"), inst(c("host.hypervisor_version", "version", ">= 8.0, < 9")), true, ""},
		{"version too old", testHost("h"), inst(c("host.hypervisor_version", "version", ">= 9.0")), false, "constraint host.hypervisor_version version >= 9.0"},
		{"attribute set", testHost("h", withAttr("gpu_model", "a100")), inst(c("host.gpu_model", "is_set", "")), true, ""},
		{"attribute not set", testHost("h"), inst(c("host.gpu_model", "is_not_set", "")), true, ""},
		{"driver capability", testHost("h"), inst(c("host.driver.live_migrate", "=", "true")), false, "constraint host.driver.live_migrate = true"},
		{"with flavor capabilities", testHost("h"), func() *structs.Instance {
			i := testInstance("i", small("capabilities:arch=x86_64"))
			i.Constraints = []*structs.Constraint{c("host.hypervisor_type", "=", "xen")}
			return i
		}(), false, "constraint host.hypervisor_type = xen"},
		{"bad attribute matches nothing", testHost("h"), inst(c("arch", "=", "x86_64")), false, "constraint arch = x86_64"},
	})
}
