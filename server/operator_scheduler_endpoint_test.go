package server

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestOperatorSchedulerConfigurationDrivesPlacement: until set, the
// configuration is the file's; binpack set by the operator then packs
// two instances on one host where the default spread them over two; a
// stale check-and-set changes nothing.
func TestOperatorSchedulerConfigurationDrivesPlacement(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	registerHost(t, s, testHost("h1", 8, 16384))
	registerHost(t, s, testHost("h2", 8, 16384))

	var got structs.SchedulerConfigResponse
	if err := s.RPC("Operator.SchedulerGetConfiguration", &structs.GenericRequest{}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Source != schedulerConfigFromFile || got.Config.RAMWeightMultiplier != 1 || got.Config.HostSubsetSize != 1 {
		t.Fatalf("default configuration %+v from %q", got.Config, got.Source)
	}

	binpack := *got.Config
	binpack.RAMWeightMultiplier, binpack.CPUWeightMultiplier, binpack.DiskWeightMultiplier = -1, -1, -1
	var set structs.SchedulerSetConfigResponse
	if err := s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: binpack, CAS: true}, &set); err != nil || !set.Updated {
		t.Fatalf("set binpack: %+v %v", set, err)
	}
	resp := createInstances(t, s, "packed", "m1.small", 2)
	hosts := map[string]bool{}
	for _, inst := range waitSettled(t, s, ids(resp)) {
		hosts[inst.HostID] = true
	}
	if len(hosts) != 1 {
		t.Fatalf("binpack put two instances on %d hosts", len(hosts))
	}

	// A check-and-set against the index read before the change fails.
	if err := s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: *got.Config, CAS: true, CheckIndex: 0}, &set); err != nil || set.Updated {
		t.Fatalf("stale CAS: %+v %v", set, err)
	}
	if err := s.RPC("Operator.SchedulerGetConfiguration", &structs.GenericRequest{}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Source != schedulerConfigFromOperator || got.Config.RAMWeightMultiplier != -1 || got.Config.ModifyIndex == 0 {
		t.Fatalf("after set %+v from %q", got.Config, got.Source)
	}

	bad := binpack
	bad.HostSubsetSize = 0
	err := s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: bad}, &set)
	if structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("host_subset_size 0: %v", err)
	}
}
