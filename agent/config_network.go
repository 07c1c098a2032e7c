package agent

import (
	"fmt"

	"github.com/stratus-cloud/stratus/structs"
)

// ServerNetworkConfig is the server's network block: how tenant
// networks are segmented (Neutron's ML2 vni_ranges and
// global_physnet_mtu). Every server of a region should have the same:
// the server that proposes a network create decides from its own.
type ServerNetworkConfig struct {
	// VNIRange is the VXLAN network identifiers tenant networks are
	// given, "first:last" (default "1:16777215"). An administrator may
	// still create a VXLAN network with an explicit id outside it.
	VNIRange string `hcl:"vni_range,optional"`
	// PhysicalMTU is the underlay's MTU (default 1500); a VXLAN
	// network's MTU is 50 bytes less, a flat or VLAN network's the same.
	PhysicalMTU int `hcl:"physical_mtu,optional"`
}

// netSegments turns the network block into the segmentation config the
// server stamps on network creates.
func (c *Config) netSegments() (structs.NetSegments, error) {
	seg := structs.DefaultNetSegments
	n := c.Server.Network
	if n == nil {
		return seg, nil
	}
	if n.VNIRange != "" {
		lo, hi, err := structs.ParseVNIRange(n.VNIRange)
		if err != nil {
			return seg, err
		}
		seg.VNIMin, seg.VNIMax = lo, hi
	}
	if n.PhysicalMTU != 0 {
		seg.PhysnetMTU = n.PhysicalMTU
	}
	if err := seg.Validate(); err != nil {
		return seg, fmt.Errorf("server network: %w", err)
	}
	return seg, nil
}

// mustNetSegments returns the segmentation config Finalize accepted.
func (c *Config) mustNetSegments() structs.NetSegments {
	seg, _ := c.netSegments()
	return seg
}
