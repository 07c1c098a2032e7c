package server

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestMultiCreateVolumesCountEachOther: the volumes one multi-create
// makes are placed counting each other's size. Two 6 GB root volumes
// on two 10 GB storage hosts go one to each (placed against the state
// alone, both would go to the first, which holds only one of them), and
// each server is pinned to its volume's host.
func TestMultiCreateVolumesCountEachOther(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	storageHost(t, s, "st1", "10")
	storageHost(t, s, "st2", "10")
	blank := func() []*structs.BlockDevice {
		return []*structs.BlockDevice{{Source: structs.BlockSourceBlank, SizeGB: 6, BootIndex: 0, DeleteOnTermination: true}}
	}
	var resp structs.InstanceCreateResponse
	if err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "multi", FlavorID: "m1.tiny", Count: 2,
		ProjectID: "p1", BlockDeviceSets: [][]*structs.BlockDevice{blank(), blank()}}, &resp); err != nil {
		t.Fatal(err)
	}
	vols, err := s.fsm.State().Volumes(nil, "p1")
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]string{}
	for _, v := range vols {
		if v.Status != structs.VolumeCreating || v.MadeFor == nil {
			t.Fatalf("volume %s: %s, made for %+v", v.ID, v.Status, v.MadeFor)
		}
		hosts[v.MadeFor.InstanceID] = v.Host
	}
	if len(vols) != 2 || len(hosts) != 2 || hosts[resp.Instances[0].ID] == hosts[resp.Instances[1].ID] {
		t.Fatalf("%d volumes on hosts %v, want one on each storage host", len(vols), hosts)
	}
	for _, inst := range resp.Instances {
		got, err := s.fsm.State().InstanceByID(nil, inst.ID)
		if err != nil || got == nil {
			t.Fatalf("instance %s: %v", inst.ID, err)
		}
		if got.TargetHostID != hosts[inst.ID] {
			t.Fatalf("instance %s pinned to %q, its volume is on %q", inst.ID, got.TargetHostID, hosts[inst.ID])
		}
	}
}
