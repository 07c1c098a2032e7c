package scheduler

import (
	"reflect"
	"testing"
)

func TestTraitsFilter(t *testing.T) {
	gpu := testInstance("i", small("trait:HW_GPU=required", "trait:HW_CPU_X86_AVX2=required"))
	noSSD := testInstance("i", small("trait:STORAGE_DISK_SSD=forbidden"))
	imageTrait := testInstance("i", small())
	imageTrait.ImageProperties = map[string]string{"trait:HW_GPU": "required", "trait:IGNORED": "forbidden"}
	runFilterCases(t, TraitsFilter{}, []filterCase{
		{"has all", testHost("h", withTraits("HW_CPU_X86_AVX2", "HW_GPU", "X")), gpu, true, ""},
		{"missing first sorted", testHost("h", withTraits("HW_GPU")), gpu, false, "missing trait HW_CPU_X86_AVX2"},
		{"missing one", testHost("h", withTraits("HW_CPU_X86_AVX2")), gpu, false, "missing trait HW_GPU"},
		{"no traits", testHost("h"), gpu, false, "missing trait HW_CPU_X86_AVX2"},
		{"forbidden absent", testHost("h", withTraits("HW_GPU")), noSSD, true, ""},
		{"forbidden present", testHost("h", withTraits("STORAGE_DISK_SSD")), noSSD, false, "forbidden trait STORAGE_DISK_SSD"},
		{"image trait present", testHost("h", withTraits("HW_GPU", "IGNORED")), imageTrait, true, ""},
		{"image trait missing", testHost("h"), imageTrait, false, "missing trait HW_GPU"},
	})
}

func TestRequestTraits(t *testing.T) {
	inst := testInstance("i", small("trait:B=required", "trait:A=required", "trait:F=forbidden"))
	inst.ImageProperties = map[string]string{"trait:A": "required", "trait:C": "required"}
	req := mustRequest(t, inst)
	if want := []string{"A", "B", "C"}; !reflect.DeepEqual(req.RequiredTraits, want) {
		t.Fatalf("required %v, want %v", req.RequiredTraits, want)
	}
	if want := []string{"F"}; !reflect.DeepEqual(req.ForbiddenTraits, want) {
		t.Fatalf("forbidden %v, want %v", req.ForbiddenTraits, want)
	}
	if _, err := NewRequest(testInstance("i", small("trait:X=maybe"))); err == nil {
		t.Fatal("bad trait value accepted")
	}
	if (TraitsFilter{}).applies(mustRequest(t, testInstance("i", small()))) {
		t.Fatal("applies without traits")
	}
}
