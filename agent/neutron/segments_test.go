package neutron

import (
	"testing"

	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

// TestProviderNetworks: the provider extension as Neutron serves it,
// over servers whose tenant networks get VNIs 1000 and 1001 of a
// 9000-byte underlay.
func TestProviderNetworks(t *testing.T) {
	h := newHarnessWith(t, func(c *server.Config) {
		c.NetSegments = structs.NetSegments{VNIMin: 1000, VNIMax: 1001, PhysnetMTU: 9000}
	})
	// A member's network: no provider attributes in its view, the MTU of
	// a VXLAN segment of the underlay.
	mine := h.create("networks", "network", aliceTok, map[string]any{"name": "mine"})
	for _, k := range []string{"provider:network_type", "provider:physical_network", "provider:segmentation_id"} {
		if _, ok := mine[k]; ok {
			t.Errorf("a member sees %s", k)
		}
	}
	if mine["mtu"] != float64(8950) {
		t.Fatalf("tenant network mtu %v", mine["mtu"])
	}
	// The admin sees its segment.
	a := h.do("GET", "/network/v2.0/networks/"+mine["id"].(string), adminTok, nil).want(t, 200).obj("network")
	if a["provider:network_type"] != "vxlan" || a["provider:segmentation_id"] != float64(1000) || a["provider:physical_network"] != nil {
		t.Fatalf("admin view %v", a)
	}
	// Members may set none of the attributes (Neutron's 403).
	for _, k := range []string{"provider:network_type", "provider:physical_network", "provider:segmentation_id"} {
		var v any = "vxlan"
		if k == "provider:segmentation_id" {
			v = 5
		}
		h.do("POST", "/network/v2.0/networks", aliceTok, map[string]any{"network": map[string]any{k: v}}).
			neutronError(t, 403, "PolicyNotAuthorized", "(rule:create_network:"+k+") is disallowed by policy")
	}
	// Admins' provider networks: flat and vlan on a physical network
	// with its MTU, vxlan with an explicit VNI.
	flat := h.create("networks", "network", adminTok, map[string]any{"name": "public",
		"provider:network_type": "flat", "provider:physical_network": "public"})
	if flat["provider:network_type"] != "flat" || flat["provider:physical_network"] != "public" ||
		flat["provider:segmentation_id"] != nil || flat["mtu"] != float64(9000) {
		t.Fatalf("flat %v", flat)
	}
	vlan := h.create("networks", "network", adminTok, map[string]any{"name": "v42",
		"provider:network_type": "vlan", "provider:physical_network": "physnet1", "provider:segmentation_id": 42})
	if vlan["provider:segmentation_id"] != float64(42) || vlan["mtu"] != float64(9000) {
		t.Fatalf("vlan %v", vlan)
	}
	x := h.create("networks", "network", adminTok, map[string]any{"name": "x7",
		"provider:network_type": "vxlan", "provider:segmentation_id": 7})
	if x["provider:segmentation_id"] != float64(7) || x["mtu"] != float64(8950) {
		t.Fatalf("vxlan %v", x)
	}
	// Segments are unique, and checked as ML2 checks them.
	for _, tc := range []struct {
		body   map[string]any
		status int
		typ    string
		msg    string
	}{
		{map[string]any{"provider:network_type": "flat", "provider:physical_network": "public"}, 409, "FlatNetworkInUse",
			"Unable to create the flat network. Physical network public is in use."},
		{map[string]any{"provider:network_type": "vlan", "provider:physical_network": "physnet1", "provider:segmentation_id": 42}, 409, "VlanIdInUse",
			"Unable to create the network. The VLAN 42 on physical network physnet1 is in use."},
		{map[string]any{"provider:network_type": "vxlan", "provider:segmentation_id": 7}, 409, "TunnelIdInUse",
			"Unable to create the network. The tunnel ID 7 is in use."},
		{map[string]any{"provider:network_type": "vlan", "provider:physical_network": "physnet1", "provider:segmentation_id": 4095}, 400, "InvalidInput",
			"provider:segmentation_id out of range (1 through 4094)."},
		{map[string]any{"provider:network_type": "vxlan", "provider:physical_network": "physnet1"}, 400, "InvalidInput",
			"provider:physical_network specified for vxlan network"},
		{map[string]any{"provider:network_type": "gre"}, 400, "InvalidInput", "network_type value 'gre' not supported."},
		{map[string]any{"mtu": 9000}, 400, "InvalidInput", "Requested MTU is too big, maximum is 8950."},
	} {
		h.do("POST", "/network/v2.0/networks", adminTok, map[string]any{"network": tc.body}).neutronError(t, tc.status, tc.typ, tc.msg)
	}
	// The segment is fixed once created.
	h.do("PUT", "/network/v2.0/networks/"+vlan["id"].(string), adminTok, map[string]any{"network": map[string]any{"provider:segmentation_id": 43}}).
		neutronError(t, 400, "InvalidInput", "Plugin does not support updating the following provider network attributes")
	// The range holds two tenant networks; the third is Neutron's 503.
	h.create("networks", "network", bobTok, map[string]any{"name": "theirs"})
	h.do("POST", "/network/v2.0/networks", bobTok, map[string]any{"network": map[string]any{"name": "one-too-many"}}).
		neutronError(t, 503, "NoNetworkAvailable", "Unable to create the network. No tenant network is available for allocation.")
	// Deleting a network frees its VNI.
	h.do("DELETE", "/network/v2.0/networks/"+mine["id"].(string), aliceTok, nil).want(t, 204)
	again := h.create("networks", "network", bobTok, map[string]any{"name": "again"})
	if v := h.do("GET", "/network/v2.0/networks/"+again["id"].(string), adminTok, nil).want(t, 200).obj("network"); v["provider:segmentation_id"] != float64(1000) {
		t.Fatalf("freed VNI not reused: %v", v)
	}
	// The provider and multi-provider extensions are listed.
	h.do("GET", "/network/v2.0/extensions/provider", adminTok, nil).want(t, 200)
	h.do("GET", "/network/v2.0/extensions/multi-provider", adminTok, nil).want(t, 200)
}

// TestMultiProviderSegments: a network's one segment may be given as
// segments (the multi-provider extension), and shows as provider:*.
func TestMultiProviderSegments(t *testing.T) {
	h := newHarness(t)
	seg := map[string]any{"provider:network_type": "vlan", "provider:physical_network": "physnet1", "provider:segmentation_id": 300}
	n := h.create("networks", "network", adminTok, map[string]any{"name": "seg", "segments": []any{seg}})
	if n["provider:network_type"] != "vlan" || n["provider:physical_network"] != "physnet1" || n["provider:segmentation_id"] != float64(300) {
		t.Fatalf("network from segments %v", n)
	}
	for _, tc := range []struct {
		body   map[string]any
		status int
		typ    string
		msg    string
	}{
		{map[string]any{"segments": []any{seg}, "provider:network_type": "vlan"}, 400, "SegmentsSetInConjunctionWithProviders",
			"Segments and provider values cannot both be set."},
		{map[string]any{"segments": []any{seg, seg}}, 400, "HTTPBadRequest", "a network has exactly one segment, 2 given"},
		{map[string]any{"segments": []any{map[string]any{"provider:network_type": "vlan", "mtu": 1}}}, 400, "HTTPBadRequest", "unrecognized attribute 'mtu'"},
		{map[string]any{"segments": []any{seg}}, 409, "VlanIdInUse", "The VLAN 300 on physical network physnet1 is in use."},
	} {
		h.do("POST", "/network/v2.0/networks", adminTok, map[string]any{"network": tc.body}).neutronError(t, tc.status, tc.typ, tc.msg)
	}
	h.do("POST", "/network/v2.0/networks", aliceTok, map[string]any{"network": map[string]any{"segments": []any{seg}}}).
		neutronError(t, 403, "PolicyNotAuthorized", "(rule:create_network:segments) is disallowed by policy")
	h.do("PUT", "/network/v2.0/networks/"+n["id"].(string), adminTok, map[string]any{"network": map[string]any{"segments": []any{seg}}}).
		want(t, 400)
}
