package scheduler

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestImagePropertiesFilter(t *testing.T) {
	img := func(kv ...string) *structs.Instance {
		i := testInstance("i", small())
		i.ImageProperties = map[string]string{}
		for j := 0; j+1 < len(kv); j += 2 {
			i.ImageProperties[kv[j]] = kv[j+1]
		}
		return i
	}
	arch := func(a string) hostOpt { return func(h *structs.Host) { h.Arch = a } }
	hvVer := func(v string) hostOpt { return func(h *structs.Host) { h.HypervisorVersion = v } }
	runFilterCases(t, ImagePropertiesFilter{}, []filterCase{
		{"no properties", testHost("h"), img(), true, ""},
		{"unrelated property", testHost("h"), img("os_distro", "ubuntu"), true, ""},
		{"architecture", testHost("h"), img("architecture", "x86_64"), true, ""},
		{"architecture canonical", testHost("h", arch("amd64")), img("hw_architecture", "X86_64"), true, ""},
		{"architecture differs", testHost("h"), img("architecture", "aarch64"), false, "image needs architecture aarch64"},
		{"arm64 is aarch64", testHost("h", arch("arm64")), img("architecture", "aarch64"), true, ""},
		{"modern name wins", testHost("h"), img("hw_architecture", "ppc64le", "architecture", "x86_64"), false, "image needs hw_architecture ppc64le"},
		{"host arch unknown", testHost("h", arch("")), img("architecture", "x86_64"), false, "image needs architecture x86_64"},
		{"hv type", testHost("h"), img("img_hv_type", "qemu"), true, ""},
		{"hv type legacy", testHost("h"), img("hypervisor_type", "xen"), false, "image needs hypervisor_type xen"},
		{"version ok", testHost("h"), img("img_hv_requested_version", ">=8.0"), true, ""},
		{"version range", testHost("h"), img("img_hv_requested_version", ">= 8.0, < 9"), true, ""},
		{"version too old", testHost("h"), img("img_hv_requested_version", ">=8.10"), false, "image needs img_hv_requested_version >=8.10"},
		{"version exact", testHost("h"), img("img_hv_requested_version", "8.2"), true, ""},
		{"version nova integer", testHost("h", hvVer("6002000")), img("img_hv_requested_version", ">=6.1"), true, ""},
		{"version nova integer old", testHost("h", hvVer("6002000")), img("img_hv_requested_version", "<6.2"), false, "image needs img_hv_requested_version <6.2"},
		{"host version unknown", testHost("h", hvVer("")), img("img_hv_requested_version", ">=99"), true, ""},
		{"malformed predicate", testHost("h"), img("img_hv_requested_version", ">=latest"), false, "image needs img_hv_requested_version >=latest"},
	})
}
