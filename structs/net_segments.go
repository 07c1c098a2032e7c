package structs

import (
	"fmt"
	"strconv"
	"strings"
)

// NetSegments is the servers' segmentation config a network create
// carries into the FSM, which reads no config files: the VNI range
// tenant networks are allocated from and the physical MTU their MTU
// derives from. A change without it (every entry from before it
// existed, and every one from a server with the defaults) allocates
// from 1 through MaxVNI over a 1500-byte physical network, as those
// entries did.
type NetSegments struct {
	// VNIMin and VNIMax bound tenant networks' VNIs, inclusive.
	VNIMin int
	VNIMax int
	// PhysnetMTU is the physical networks' MTU (global_physnet_mtu).
	PhysnetMTU int
}

// DefaultNetSegments is what a change without NetSegments means.
var DefaultNetSegments = NetSegments{VNIMin: 1, VNIMax: MaxVNI, PhysnetMTU: PhysnetMTU}

// Validate checks a segmentation config.
func (s NetSegments) Validate() error {
	if s.VNIMin < 1 || s.VNIMax > MaxVNI || s.VNIMin > s.VNIMax {
		return fmt.Errorf("vni_range %d:%d is not a range within 1:%d", s.VNIMin, s.VNIMax, MaxVNI)
	}
	if s.PhysnetMTU < 68+VXLANOverhead || s.PhysnetMTU > 9216 {
		return fmt.Errorf("physical_mtu %d is not between %d and 9216", s.PhysnetMTU, 68+VXLANOverhead)
	}
	return nil
}

// IsDefault reports whether s is the default config, which changes
// need not carry.
func (s NetSegments) IsDefault() bool { return s == DefaultNetSegments }

// MaxMTU is the largest MTU a network of a type may have: the physical
// MTU, less VXLAN's overhead for a VXLAN network.
func (s NetSegments) MaxMTU(networkType string) int {
	if networkType == NetTypeVXLAN {
		return s.PhysnetMTU - VXLANOverhead
	}
	return s.PhysnetMTU
}

// ParseVNIRange parses a VNI range as Neutron writes it ("1000:1999").
func ParseVNIRange(v string) (int, int, error) {
	lo, hi, ok := strings.Cut(strings.TrimSpace(v), ":")
	if !ok {
		return 0, 0, fmt.Errorf("vni_range %q is not <first>:<last>", v)
	}
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("vni_range %q is not <first>:<last>", v)
	}
	return a, b, nil
}
