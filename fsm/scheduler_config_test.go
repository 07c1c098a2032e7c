package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func populateSchedulerConfig(t *testing.T, s *StateStore) {
	t.Helper()
	if ok := s.SetSchedulerConfig(6, &structs.SchedulerSetConfigEntry{Config: &structs.SchedulerConfiguration{
		RAMWeightMultiplier: -1, CPUWeightMultiplier: -1, DiskWeightMultiplier: -2, HostSubsetSize: 3}}); ok != true {
		t.Fatalf("set scheduler config: %v", ok)
	}
}

func TestSchedulerConfigSetAndCAS(t *testing.T) {
	s, err := NewStateStore()
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.SchedulerConfig(nil); err != nil || c != nil {
		t.Fatalf("fresh state has %+v, %v", c, err)
	}
	cfg := &structs.SchedulerConfiguration{RAMWeightMultiplier: 1, CPUWeightMultiplier: 1, DiskWeightMultiplier: 1, HostSubsetSize: 1}
	// CAS at 0 means "never set": it succeeds once.
	if ok := s.SetSchedulerConfig(5, &structs.SchedulerSetConfigEntry{Config: cfg, CAS: true, CheckIndex: 0}); ok != true {
		t.Fatalf("first CAS: %v", ok)
	}
	if ok := s.SetSchedulerConfig(6, &structs.SchedulerSetConfigEntry{Config: cfg, CAS: true, CheckIndex: 0}); ok != false {
		t.Fatalf("stale CAS: %v", ok)
	}
	binpack := cfg.Copy()
	binpack.RAMWeightMultiplier = -1
	if ok := s.SetSchedulerConfig(7, &structs.SchedulerSetConfigEntry{Config: binpack, CAS: true, CheckIndex: 5}); ok != true {
		t.Fatalf("CAS at the current index: %v", ok)
	}
	got, _ := s.SchedulerConfig(nil)
	if got.RAMWeightMultiplier != -1 || got.CreateIndex != 5 || got.ModifyIndex != 7 {
		t.Fatalf("stored %+v", got)
	}
	if s.Index(TableSchedulerConfig) != 7 {
		t.Fatalf("table index %d", s.Index(TableSchedulerConfig))
	}
}

func TestSchedulerConfigRejectsBadValues(t *testing.T) {
	s, err := NewStateStore()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []*structs.SchedulerConfiguration{
		nil,
		{HostSubsetSize: 0},
		{HostSubsetSize: 1, SoftAffinityWeightMultiplier: -1},
	} {
		resp := s.SetSchedulerConfig(3, &structs.SchedulerSetConfigEntry{Config: bad})
		if err, _ := resp.(error); structs.KindOf(err) != structs.KindInvalid {
			t.Fatalf("%+v: %v", bad, resp)
		}
	}
	if c, _ := s.SchedulerConfig(nil); c != nil {
		t.Fatalf("a refused set stored %+v", c)
	}
}
