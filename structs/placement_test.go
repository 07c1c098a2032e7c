package structs

import (
	"strings"
	"testing"
)

func TestEffectiveAZ(t *testing.T) {
	zoned := &Aggregate{ID: 1, Hosts: []string{"a"}, Metadata: map[string]string{AggregateAZKey: "london"}}
	plain := &Aggregate{ID: 2, Hosts: []string{"a", "b"}, Metadata: map[string]string{"ssd": "true"}}
	for _, tc := range []struct {
		host *Host
		want string
	}{
		{&Host{ID: "a", AZ: "az1"}, "london"}, // the aggregate's zone wins
		{&Host{ID: "b", AZ: "az1"}, "az1"},    // else the agent's
		{&Host{ID: "c"}, DefaultAvailabilityZone},
	} {
		if got := EffectiveAZ(tc.host, []*Aggregate{plain, zoned}); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.host.ID, got, tc.want)
		}
	}
	c := zoned.Copy()
	c.Hosts[0], c.Metadata[AggregateAZKey] = "x", "paris"
	if zoned.Hosts[0] != "a" || zoned.AZ() != "london" || !zoned.HasHost("a") || zoned.HasHost("x") {
		t.Fatal("copy shares state")
	}
}

func TestServerGroupRules(t *testing.T) {
	for _, tc := range []struct {
		g    ServerGroup
		ok   bool
		hard bool
		max  int
	}{
		{ServerGroup{Name: "g", Policy: PolicyAntiAffinity}, true, true, 1},
		{ServerGroup{Name: "g", Policy: PolicyAntiAffinity, MaxServerPerHost: 3}, true, true, 3},
		{ServerGroup{Name: "g", Policy: PolicyAffinity}, true, true, 1},
		{ServerGroup{Name: "g", Policy: PolicySoftAffinity}, true, false, 1},
		{ServerGroup{Name: "g", Policy: PolicySoftAntiAffinity}, true, false, 1},
		{ServerGroup{Name: "g", Policy: PolicyAffinity, MaxServerPerHost: 2}, false, true, 2},
		{ServerGroup{Name: "g", Policy: "spread"}, false, false, 1},
		{ServerGroup{Name: " ", Policy: PolicyAffinity}, false, true, 1},
	} {
		if err := tc.g.Validate(); (err == nil) != tc.ok || (err != nil && KindOf(err) != KindInvalid) {
			t.Errorf("%+v: %v", tc.g, err)
		}
		if tc.g.Hard() != tc.hard || tc.g.MaxPerHost() != tc.max {
			t.Errorf("%+v: hard %v max %d", tc.g, tc.g.Hard(), tc.g.MaxPerHost())
		}
	}
	g := &ServerGroup{Members: []string{"i1"}}
	c := g.Copy()
	c.Members[0] = "x"
	if !g.HasMember("i1") || g.HasMember("x") {
		t.Fatal("copy shares members")
	}
	if len(QuotaResources()) != len(DefaultQuotas) || DefaultQuotas[QuotaInstances] != 10 || DefaultQuotas[QuotaRAM] != 51200 {
		t.Fatal("Nova's default quotas")
	}
	for _, mt := range []MessageType{ServerGroupCreateType, ServerGroupDeleteType, AggregateUpdateType, QuotaUpdateType} {
		if strings.HasPrefix(mt.String(), "MessageType(") {
			t.Errorf("%d has no name", mt)
		}
	}
}

// TestVolumeBackedInstanceAsksNoRootDisk: an instance booted from a
// volume asks DISK_GB for its ephemeral and swap only, as Nova's request
// spec for a volume-backed instance; a flavor's own resources:DISK_GB
// still wins, and an image-backed instance asks for its root disk.
func TestVolumeBackedInstanceAsksNoRootDisk(t *testing.T) {
	f := &Flavor{ID: "f", VCPUs: 1, MemoryMB: 512, RootGB: 10, EphemeralGB: 2, SwapMB: 512}
	inst := &Instance{Flavor: f}
	if res, err := inst.Resources(); err != nil || res[ResourceDiskGB] != 13 {
		t.Fatalf("image-backed: %v %v", res, err)
	}
	inst.BlockDevices = []*BlockDevice{{VolumeID: "v", BootIndex: 0}}
	if res, err := inst.Resources(); err != nil || res[ResourceDiskGB] != 3 || res[ResourceVCPU] != 1 {
		t.Fatalf("volume-backed: %v %v", res, err)
	}
	inst.Flavor = &Flavor{ID: "g", VCPUs: 1, MemoryMB: 512, RootGB: 10, ExtraSpecs: map[string]string{"resources:DISK_GB": "7"}}
	if res, err := inst.Resources(); err != nil || res[ResourceDiskGB] != 7 {
		t.Fatalf("override: %v %v", res, err)
	}
	inst.Flavor = &Flavor{ID: "h", VCPUs: 1, MemoryMB: 512, RootGB: 10}
	if res, _ := inst.Resources(); len(res) != 2 {
		t.Fatalf("volume-backed without ephemeral or swap asks DISK_GB: %v", res)
	}
	inst.BlockDevices = []*BlockDevice{{VolumeID: "data", BootIndex: -1}}
	inst.Flavor = f
	if res, _ := inst.Resources(); res[ResourceDiskGB] != 13 {
		t.Fatalf("data volume only: %v", res)
	}
}
