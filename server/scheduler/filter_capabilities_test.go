package scheduler

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestSpecMatcher(t *testing.T) {
	cases := []struct {
		req, value string
		present    bool
		want       bool
	}{
		{"1024", "1024", true, true},
		{"1024", "2048", true, false},
		{"foo bar", "foo bar", true, true},
		{"x", "", false, false},
		{"s== QEMU", "QEMU", true, true},
		{"s== QEMU", "qemu", true, false},
		{"s!= kvm", "qemu", true, true},
		{"s< b", "a", true, true},
		{"s<= a", "a", true, true},
		{"s> a", "a", true, false},
		{"s>= a", "b", true, true},
		{"<in> avx", "sse avx2", true, true},
		{"<in> avx512", "sse avx2", true, false},
		{"<all-in> sse avx", "sse avx2", true, true},
		{"<all-in> sse vmx", "sse avx2", true, false},
		{"<or> kvm <or> qemu", "qemu", true, true},
		{"<or> kvm <or> qemu", "xen", true, false},
		{"<or> kvm", "kvm", true, true},
		{"<or>", "kvm", true, false},
		{">= 4", "8", true, true},
		{">= 4", "2", true, false},
		{"= 4", "4", true, true},
		{"= 4", "3.5", true, false},
		{"<= 4", "3.5", true, true},
		{"== 4", "4.0", true, true},
		{"!= 4", "5", true, true},
		{"!= 4", "4", true, false},
		{">= 8", "lots", true, false},
		{">= 8.1", "8.2.0", true, true},
		{">= 8.10", "8.2.0", true, false},
		{"== 8.2", "8.2.0", true, true},
		{">= 4", "", false, false},
		{"s==", "x", true, false},
	}
	for _, c := range cases {
		m := parseSpec(c.req)
		if got := m.match(c.value, c.present); got != c.want {
			t.Errorf("%q matching %q (present %v): got %v, want %v", c.req, c.value, c.present, got, c.want)
		}
	}
}

func TestComputeCapabilitiesFilter(t *testing.T) {
	inst := func(specs ...string) *structs.Instance { return testInstance("i", small(specs...)) }
	runFilterCases(t, ComputeCapabilitiesFilter{}, []filterCase{
		{"no capabilities", testHost("h"), inst(), true, ""},
		{"unscoped keys ignored", testHost("h"), inst("hypervisor_type=xen", "hw:cpu_policy=dedicated"), true, ""},
		{"attribute equal", testHost("h", withAttr("gpu_model", "a100")), inst("capabilities:gpu_model=a100"), true, ""},
		{"attribute differs", testHost("h", withAttr("gpu_model", "t4")), inst("capabilities:gpu_model=a100"), false, "capabilities mismatch gpu_model"},
		{"attribute missing", testHost("h"), inst("capabilities:gpu_model=a100"), false, "capabilities mismatch gpu_model"},
		{"numeric attribute", testHost("h", withAttr("numa_nodes", "4")), inst("capabilities:numa_nodes=>= 2"), true, ""},
		{"hypervisor_type field", testHost("h"), inst("capabilities:hypervisor_type=s== QEMU"), true, ""},
		{"hypervisor_type or", testHost("h"), inst("capabilities:hypervisor_type=<or> kvm <or> xen"), false, "capabilities mismatch hypervisor_type"},
		{"arch field", testHost("h"), inst("capabilities:arch=x86_64"), true, ""},
		{"hypervisor_version field", testHost("h"), inst("capabilities:hypervisor_version=>= 8.1"), true, ""},
		{"field falls back to attribute", testHost("h", withAttr("arch", "ppc64le"), func(h *structs.Host) { h.Arch = "" }), inst("capabilities:arch=ppc64le"), true, ""},
		{"first mismatch by key", testHost("h"), inst("capabilities:b=1", "capabilities:a=1"), false, "capabilities mismatch a"},
		{"driver capability present", testHost("h", func(h *structs.Host) { h.Capabilities = []string{structs.HostCapabilityLiveMigrate} }),
			inst("capabilities:driver:live_migrate=true"), true, ""},
		{"driver capability missing", testHost("h"), inst("capabilities:driver:live_migrate=true"), false, "capabilities mismatch driver:live_migrate"},
	})
}
