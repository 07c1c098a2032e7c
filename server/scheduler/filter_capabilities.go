package scheduler

import (
	"sort"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// ComputeCapabilitiesFilter passes hosts whose capabilities satisfy the
// flavor's capabilities:KEY extra specs, as Nova's filter of that name
// does. KEY is looked up in the host's Attributes, except hypervisor_type,
// arch and hypervisor_version, which read the host's fields (falling back
// to Attributes when the field is empty). Values may use Nova's operators
// (see specMatcher). Extra specs without the capabilities: scope are not
// read. The instance's own constraints (structs.Constraint, from an
// instance group's spec) are checked here too.
type ComputeCapabilitiesFilter struct{}

// Name implements Filter.
func (ComputeCapabilitiesFilter) Name() string { return "ComputeCapabilitiesFilter" }

func (ComputeCapabilitiesFilter) applies(req *Request) bool { return len(req.caps) > 0 }

// Filter implements Filter.
func (ComputeCapabilitiesFilter) Filter(h *HostView, req *Request) (bool, string) {
	for i := range req.caps {
		c := &req.caps[i]
		if c.cons != nil {
			if !c.cons.match(h.Host) {
				return false, c.reason
			}
			continue
		}
		v, ok := capability(h.Host, c.key)
		if !c.m.match(v, ok) {
			return false, c.reason
		}
	}
	return true, ""
}

// capabilityCheck is one capabilities:KEY extra spec, or one of the
// instance's constraints (cons set).
type capabilityCheck struct {
	key    string
	m      specMatcher
	cons   *constraintMatch
	reason string
}

const capabilityScope = "capabilities:"

// capabilityChecks parses a flavor's capabilities:KEY extra specs, sorted
// by key so the first mismatch named is stable.
func capabilityChecks(specs map[string]string) []capabilityCheck {
	var out []capabilityCheck
	for k, v := range specs {
		key, ok := strings.CutPrefix(k, capabilityScope)
		if !ok || key == "" {
			continue
		}
		out = append(out, capabilityCheck{key: key, m: parseSpec(v), reason: "capabilities mismatch " + key})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// DriverCapabilityKey is the capabilities: key that requires the host's
// driver to support an operation (structs.HostCapability*), as in
// "capabilities:driver:live_migrate" = "true"; a live migration asks it
// of its destination.
const DriverCapabilityKey = "driver:"

// capability returns a host's value for a capability key.
func capability(h *structs.Host, key string) (string, bool) {
	if c, ok := strings.CutPrefix(key, DriverCapabilityKey); ok {
		return strconv.FormatBool(h.HasCapability(c)), true
	}
	var field string
	switch key {
	case "hypervisor_type":
		field = h.HypervisorType
	case "arch", "cpu_arch":
		field = h.Arch
	case "hypervisor_version":
		field = h.HypervisorVersion
	}
	if field != "" {
		return field, true
	}
	v, ok := h.Attributes[key]
	return v, ok
}
