package scheduler

import (
	"regexp"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// Instance constraints (an instance group's constraint blocks, such as
// host.arch = x86_64) are checked by ComputeCapabilitiesFilter beside the
// flavor's capabilities: extra specs: they read the same host values,
// with the same names after "host.", plus host.name and
// host.driver.<capability>.

// constraintMatch is one parsed constraint.
type constraintMatch struct {
	key   string // the attribute without "host."
	op    string
	value string
	re    *regexp.Regexp
	pred  versionPredicate
	// bad marks a constraint that cannot be parsed: it matches no host
	// (the servers validate constraints before storing them).
	bad bool
}

// constraintChecks parses an instance's constraints once per request,
// in their order.
func constraintChecks(list []*structs.Constraint) []capabilityCheck {
	out := make([]capabilityCheck, 0, len(list))
	for _, c := range list {
		if c == nil {
			continue
		}
		m := &constraintMatch{op: c.Operator, value: c.Value}
		if m.op == "" || m.op == "==" {
			m.op = structs.ConstraintEqual
		}
		key, ok := strings.CutPrefix(c.Attribute, structs.ConstraintAttributePrefix)
		m.key, m.bad = key, !ok || key == ""
		switch m.op {
		case structs.ConstraintRegexp:
			re, err := regexp.Compile(c.Value)
			m.re, m.bad = re, m.bad || err != nil
		case structs.ConstraintVersion:
			m.pred = parseVersionPredicate(c.Value)
		case structs.ConstraintEqual, structs.ConstraintNotEqual, structs.ConstraintIsSet, structs.ConstraintIsNotSet:
		default:
			m.bad = true
		}
		out = append(out, capabilityCheck{key: c.Attribute, cons: m, reason: "constraint " + c.String()})
	}
	return out
}

// match reports whether host h satisfies the constraint.
func (m *constraintMatch) match(h *structs.Host) bool {
	if m.bad {
		return false
	}
	v, ok := constraintValue(h, m.key)
	switch m.op {
	case structs.ConstraintEqual:
		return ok && v == m.value
	case structs.ConstraintNotEqual:
		return !ok || v != m.value
	case structs.ConstraintRegexp:
		return ok && m.re.MatchString(v)
	case structs.ConstraintVersion:
		return ok && m.pred.satisfiedBy(hostVersion(v))
	case structs.ConstraintIsSet:
		return ok
	case structs.ConstraintIsNotSet:
		return !ok
	}
	return false
}

// constraintValue is a host's value for a constraint's key.
func constraintValue(h *structs.Host, key string) (string, bool) {
	if key == "name" {
		return h.Name, h.Name != ""
	}
	if c, ok := strings.CutPrefix(key, "driver."); ok {
		return capability(h, DriverCapabilityKey+c)
	}
	return capability(h, key)
}
