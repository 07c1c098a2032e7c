package server

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// segmentedServer is a server whose tenant networks get VNIs 100 and
// 101 over a 9000-byte physical network.
func segmentedServer(t *testing.T, level structs.FSMLevel) *Server {
	t.Helper()
	s := testServer(t, func(c *Config) {
		c.NetSegments = structs.NetSegments{VNIMin: 100, VNIMax: 101, PhysnetMTU: 9000}
		c.FSMLevel = level
	})
	waitForLeader(t, s)
	return s
}

func netCreateErr(s *Server, caller structs.NetCaller, n *structs.Network, fields ...string) (*structs.NetWriteResponse, error) {
	var out structs.NetWriteResponse
	err := s.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Caller: caller, Fields: fields, Network: n}, &out)
	return &out, err
}

func TestNetProviderAttributesPolicy(t *testing.T) {
	s := segmentedServer(t, 0)
	alice := structs.NetCaller{ProjectID: "p-alice"}
	// Members may set no provider attribute (Neutron's 403).
	for _, f := range []string{"provider:network_type", "provider:physical_network", "provider:segmentation_id"} {
		_, err := netCreateErr(s, alice, &structs.Network{NetworkType: structs.NetTypeVXLAN, SegmentationID: 7}, f)
		if structs.KindOf(err) != structs.KindPermission || structs.ErrorType(err) != structs.ErrPolicyNotAuthorized ||
			structs.Message(err) != "(rule:create_network:"+f+") is disallowed by policy" {
			t.Fatalf("member sets %s: %v", f, err)
		}
	}
	// Nor carry one in the body without naming it (the native API).
	_, err := netCreateErr(s, alice, &structs.Network{SegmentationID: 7})
	if structs.ErrorType(err) != structs.ErrPolicyNotAuthorized {
		t.Fatalf("member's unnamed segment: %v", err)
	}
	// Administrators' provider networks are checked as ML2 checks them.
	for _, tc := range []struct {
		n      structs.Network
		fields []string
		msg    string
	}{
		{structs.Network{PhysicalNetwork: "physnet1"}, []string{"provider:physical_network"}, "network_type required"},
		{structs.Network{NetworkType: structs.NetTypeVXLAN, PhysicalNetwork: "physnet1"},
			[]string{"provider:network_type", "provider:physical_network"}, "provider:physical_network specified for vxlan network"},
		{structs.Network{NetworkType: structs.NetTypeFlat, PhysicalNetwork: "physnet1", SegmentationID: 5},
			[]string{"provider:network_type", "provider:physical_network", "provider:segmentation_id"}, "segmentation_id specified for flat provider network"},
		{structs.Network{NetworkType: structs.NetTypeVLAN, PhysicalNetwork: "physnet1", SegmentationID: 5000},
			[]string{"provider:network_type", "provider:physical_network", "provider:segmentation_id"}, "provider:segmentation_id out of range (1 through 4094)."},
		{structs.Network{NetworkType: structs.NetTypeFlat}, []string{"provider:network_type"}, "flat network requires a physical_network."},
	} {
		_, err := netCreateErr(s, netAdmin, &tc.n, tc.fields...)
		if structs.ErrorType(err) != structs.ErrInvalidInput || structs.Message(err) != "Invalid input for operation: "+tc.msg {
			t.Fatalf("%+v: %v, want %q", tc.n, err, tc.msg)
		}
	}
	pf := []string{"provider:network_type", "provider:physical_network", "provider:segmentation_id"}
	var vlan *structs.NetWriteResponse
	vlan, err = netCreateErr(s, netAdmin, &structs.Network{NetworkType: structs.NetTypeVLAN, PhysicalNetwork: "physnet1", SegmentationID: 100}, pf...)
	if err != nil || vlan.Networks[0].MTU != 9000 || vlan.Networks[0].SegmentationID != 100 {
		t.Fatalf("vlan network: %+v %v", vlan, err)
	}
	if _, err := netCreateErr(s, netAdmin, &structs.Network{NetworkType: structs.NetTypeVLAN, PhysicalNetwork: "physnet1", SegmentationID: 100}, pf...); structs.ErrorType(err) != structs.ErrVlanIDInUse ||
		structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("second vlan 100: %v", err)
	}
	// Tenant networks take the configured range, lowest first, with the
	// physical MTU less VXLAN's 50 bytes; past it, Neutron's 503.
	for _, want := range []int{100, 101} {
		out, err := netCreateErr(s, alice, &structs.Network{AdminStateUp: true})
		if err != nil || out.Networks[0].SegmentationID != want || out.Networks[0].NetworkType != structs.NetTypeVXLAN || out.Networks[0].MTU != 8950 {
			t.Fatalf("tenant network: %+v %v", out.Networks, err)
		}
	}
	_, err = netCreateErr(s, alice, &structs.Network{AdminStateUp: true})
	if structs.KindOf(err) != structs.KindUnavailable || structs.ErrorType(err) != structs.ErrNoNetworkAvailable ||
		structs.Message(err) != "Unable to create the network. No tenant network is available for allocation." {
		t.Fatalf("exhausted range: %v", err)
	}
	// An MTU above the segment's is refused, on create and on update.
	if _, err := netCreateErr(s, netAdmin, &structs.Network{MTU: 9000}, "mtu"); structs.ErrorType(err) != structs.ErrInvalidInput {
		t.Fatalf("MTU 9000 on vxlan: %v", err)
	}
	var out structs.NetWriteResponse
	err = s.RPC("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindNetwork, ID: vlan.Networks[0].ID, Caller: netAdmin,
		Fields: []string{"mtu"}, Network: &structs.Network{MTU: 9001}}, &out)
	if structs.ErrorType(err) != structs.ErrInvalidInput || structs.Message(err) != "Invalid input for operation: Requested MTU is too big, maximum is 9000." {
		t.Fatalf("MTU update: %v", err)
	}
	// The segment cannot change.
	err = s.RPC("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindNetwork, ID: vlan.Networks[0].ID, Caller: netAdmin,
		Fields: []string{"provider:segmentation_id"}, Network: &structs.Network{SegmentationID: 7}}, &out)
	if structs.ErrorType(err) != structs.ErrInvalidInput {
		t.Fatalf("segment update: %v", err)
	}
}

// TestNetSegmentsWaitForTheUpgrade: a configured VNI range is used only
// once every server's FSM reads it; until then tenant network creates
// are refused rather than given VNIs outside the range.
func TestNetSegmentsWaitForTheUpgrade(t *testing.T) {
	s := segmentedServer(t, structs.FSMLevelBatched)
	_, err := netCreateErr(s, structs.NetCaller{ProjectID: "p1"}, &structs.Network{AdminStateUp: true})
	if structs.KindOf(err) != structs.KindUnavailable {
		t.Fatalf("create during the upgrade: %v", err)
	}
	if err := s.setAdvertisedFSMLevel(structs.CurrentFSMLevel); err != nil {
		t.Fatal(err)
	}
	waitClusterFSMLevel(t, s, structs.CurrentFSMLevel)
	out, err := netCreateErr(s, structs.NetCaller{ProjectID: "p1"}, &structs.Network{AdminStateUp: true})
	if err != nil || out.Networks[0].SegmentationID != 100 {
		t.Fatalf("create after the upgrade: %+v %v", out, err)
	}
}
