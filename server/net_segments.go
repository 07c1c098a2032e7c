package server

import (
	"github.com/stratus-cloud/stratus/structs"
)

// Segmentation of networks: the servers' config (vni_range,
// physical_mtu) travels in every network create as NetChange.Segments,
// since the FSM, which allocates the VNI, reads no config. The checks
// of provider attributes Neutron's type drivers make live here, before
// proposal, rather than in the FSM: an entry an older build accepted
// must apply the same when its log is replayed.

// stampSegments gives every network create and update among changes
// this server's segmentation config, once every server's FSM reads it
// (FSMLevelSegments). Until then only the default config may be in
// force, which an unstamped change means: a network create under a
// configured range is refused rather than given a VNI outside it.
func (s *Server) stampSegments(changes []*structs.NetChange) error {
	seg := s.config.NetSegments
	if seg == (structs.NetSegments{}) {
		seg = structs.DefaultNetSegments
	}
	for _, c := range changes {
		if c.Kind != structs.NetKindNetwork || c.Op == structs.NetOpDelete {
			continue
		}
		if l, holder := s.ClusterFSMLevel(); l < structs.FSMLevelSegments {
			if seg.IsDefault() || c.Op == structs.NetOpUpdate {
				continue
			}
			return structs.Errorf(structs.KindUnavailable,
				"networks are segmented by vni_range only from %s, and server %s is at %s: finish the rolling upgrade first",
				structs.FSMLevelSegments, holder, l)
		}
		c.Segments = &seg
	}
	return nil
}

// checkProvider checks the provider attributes of a network an
// administrator creates, as Neutron's ML2 type drivers do (a VLAN's id
// range is structs.Network.Validate's; VLAN ids are never allocated,
// so a VLAN network names its own). The FSM checks the MTU against
// what the segment carries.
func checkProvider(n *structs.Network) error {
	if n.NetworkType == "" && (n.PhysicalNetwork != "" || n.SegmentationID != 0) {
		return invalid("network_type required")
	}
	switch n.NetworkType {
	case structs.NetTypeVXLAN:
		if n.PhysicalNetwork != "" {
			return invalid("provider:physical_network specified for vxlan network")
		}
	case structs.NetTypeFlat:
		if n.SegmentationID != 0 {
			return invalid("segmentation_id specified for flat provider network")
		}
	case structs.NetTypeLocal:
		if n.PhysicalNetwork != "" || n.SegmentationID != 0 {
			return invalid("physical_network and segmentation_id prohibited for local provider network")
		}
	}
	return nil
}

// providerSet names the first provider attribute a network carries, ""
// for none.
func providerSet(n *structs.Network) string {
	switch {
	case n.NetworkType != "":
		return "provider:network_type"
	case n.PhysicalNetwork != "":
		return "provider:physical_network"
	case n.SegmentationID != 0:
		return "provider:segmentation_id"
	}
	return ""
}

func invalid(format string, args ...any) error {
	return structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidInput, "Invalid input for operation: "+format, args...)
}
