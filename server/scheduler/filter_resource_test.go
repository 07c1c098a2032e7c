package scheduler

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestResourceFilter(t *testing.T) {
	const mem, vcpu, disk, fpga = structs.ResourceMemoryMB, structs.ResourceVCPU, structs.ResourceDiskGB, "CUSTOM_FPGA"
	inv := func(class string, i structs.Inventory) hostOpt {
		return func(h *structs.Host) { h.Inventories[class] = &i }
	}
	fpgaInst := testInstance("i", small("resources:CUSTOM_FPGA=1"))
	twoCustom := testInstance("i", small("resources:CUSTOM_B=1", "resources:CUSTOM_A=1"))
	noDisk := testInstance("i", small("resources:DISK_GB=0"))
	runFilterCases(t, ResourceFilter{}, []filterCase{
		{"fits", testHost("h"), testInstance("i", small()), true, ""},
		// 32768-512 = 32256 usable.
		{"memory exactly full", testHost("h", withUsage(mem, 32256-1024)), testInstance("i", small()), true, ""},
		{"memory short", testHost("h", withUsage(mem, 32256-1023)), testInstance("i", small()), false, "insufficient MEMORY_MB"},
		// 16 * 4 = 64 VCPU.
		{"vcpu ratio", testHost("h", withUsage(vcpu, 63)), testInstance("i", small()), true, ""},
		{"vcpu before memory", testHost("h", withUsage(vcpu, 64), withUsage(mem, 32256)), testInstance("i", small()), false, "insufficient VCPU"},
		{"memory before disk", testHost("h", withUsage(disk, 500), withUsage(mem, 32256)), testInstance("i", small()), false, "insufficient MEMORY_MB"},
		{"disk", testHost("h", withUsage(disk, 491)), testInstance("i", small()), false, "insufficient DISK_GB"},
		{"no disk inventory", testHost("h", withoutInv(disk)), testInstance("i", small()), false, "insufficient DISK_GB"},
		{"disk dropped", testHost("h", withoutInv(disk)), noDisk, true, ""},
		{"custom missing", testHost("h"), fpgaInst, false, "insufficient CUSTOM_FPGA"},
		{"custom present", testHost("h", withInv(fpga, 2)), fpgaInst, true, ""},
		{"custom used up", testHost("h", withInv(fpga, 2), withUsage(fpga, 2)), fpgaInst, false, "insufficient CUSTOM_FPGA"},
		{"customs sorted", testHost("h"), twoCustom, false, "insufficient CUSTOM_A"},
		{"standard before custom", testHost("h", withUsage(mem, 32256)), twoCustom, false, "insufficient MEMORY_MB"},
		{"max unit", testHost("h", inv(mem, structs.Inventory{Total: 8192, MaxUnit: 512, AllocationRatio: 1})), testInstance("i", small()), false, "insufficient MEMORY_MB"},
		{"min unit", testHost("h", inv(mem, structs.Inventory{Total: 8192, MinUnit: 2048, AllocationRatio: 1})), testInstance("i", small()), false, "insufficient MEMORY_MB"},
		{"step size", testHost("h", inv(mem, structs.Inventory{Total: 8192, StepSize: 1000, AllocationRatio: 1})), testInstance("i", small()), false, "insufficient MEMORY_MB"},
		{"step size multiple", testHost("h", inv(mem, structs.Inventory{Total: 8192, StepSize: 512, AllocationRatio: 1})), testInstance("i", small()), true, ""},
	})
}

func TestResourceFilterCountsOverlay(t *testing.T) {
	// Room for two 12 GiB instances, not three.
	v := NewHostView(testHost("h"))
	req := mustRequest(t, testInstance("i", testFlavor(1, 12*1024, 10)))
	for i := range 2 {
		if ok, reason := (ResourceFilter{}).Filter(v, req); !ok {
			t.Fatalf("placement %d: %s", i, reason)
		}
		v.consume(req.Resources)
	}
	if ok, reason := (ResourceFilter{}).Filter(v, req); ok || reason != "insufficient MEMORY_MB" {
		t.Fatalf("third placement: %v %q", ok, reason)
	}
	if v.Host.Usage[structs.ResourceMemoryMB] != 0 {
		t.Fatal("overlay wrote the host's usage")
	}
	if got := v.Used(structs.ResourceMemoryMB); got != 24*1024 {
		t.Fatalf("used %d", got)
	}
}
