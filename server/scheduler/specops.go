package scheduler

import (
	"strconv"
	"strings"
)

// specMatcher is a parsed extra-spec requirement with Nova's operators
// (nova/scheduler/filters/extra_specs_ops.py): "s== x", "s!= x", "s< x",
// "s<= x", "s> x", "s>= x" compare strings; "== n", "!= n", ">= n",
// "<= n" and "= n" (meaning at least n) compare numbers; "<in> x" asks
// for a substring, "<all-in> a b" for several, "<or> a <or> b" for one of
// several values. Anything else must equal the value exactly.
type specMatcher struct {
	raw   string
	op    string   // "" for plain equality
	words []string // the operands after op
	num   float64  // words[0] as a number, when numOK
	numOK bool
}

var specOps = map[string]bool{
	"=": true, "==": true, "!=": true, ">=": true, "<=": true,
	"s==": true, "s!=": true, "s<": true, "s<=": true, "s>": true, "s>=": true,
	"<in>": true, "<all-in>": true, "<or>": true,
}

// parseSpec parses an extra-spec value once per request.
func parseSpec(req string) specMatcher {
	m := specMatcher{raw: req}
	words := strings.Fields(req)
	if len(words) == 0 || !specOps[words[0]] {
		return m
	}
	m.op, m.words = words[0], words[1:]
	if len(m.words) > 0 {
		n, err := strconv.ParseFloat(m.words[0], 64)
		m.num, m.numOK = n, err == nil
	}
	return m
}

// match reports whether a host's value satisfies the requirement;
// present is false when the host does not report the value at all.
func (m *specMatcher) match(value string, present bool) bool {
	if m.op == "" {
		return present && value == m.raw
	}
	if !present || len(m.words) == 0 {
		return false
	}
	w := m.words[0]
	switch m.op {
	case "<or>":
		// v1 <or> v2 <or> v3: the values sit at the even positions.
		for i := 0; i < len(m.words); i += 2 {
			if m.words[i] == value {
				return true
			}
		}
		return false
	case "<in>":
		return strings.Contains(value, w)
	case "<all-in>":
		for _, x := range m.words {
			if !strings.Contains(value, x) {
				return false
			}
		}
		return true
	case "s==":
		return value == w
	case "s!=":
		return value != w
	case "s<":
		return value < w
	case "s<=":
		return value <= w
	case "s>":
		return value > w
	case "s>=":
		return value >= w
	}
	c, ok := m.compareNumber(value)
	if !ok {
		return false
	}
	switch m.op {
	case "=", ">=":
		return c >= 0
	case "<=":
		return c <= 0
	case "==":
		return c == 0
	case "!=":
		return c != 0
	}
	return false
}

// compareNumber compares value with the operand as numbers, or as dotted
// versions ("8.2.0") when either is not a plain number.
func (m *specMatcher) compareNumber(value string) (int, bool) {
	if m.numOK {
		if x, err := strconv.ParseFloat(value, 64); err == nil {
			switch {
			case x < m.num:
				return -1, true
			case x > m.num:
				return 1, true
			}
			return 0, true
		}
	}
	return compareVersions(value, m.words[0])
}

// compareVersions compares dotted decimal versions ("6.2" < "6.10.1");
// missing parts count as 0. ok is false when either is not a version.
func compareVersions(a, b string) (c int, ok bool) {
	if a == "" || b == "" {
		return 0, false
	}
	for a != "" || b != "" {
		var x, y int64
		if x, a, ok = versionPart(a); !ok {
			return 0, false
		}
		if y, b, ok = versionPart(b); !ok {
			return 0, false
		}
		if x != y {
			if x < y {
				return -1, true
			}
			return 1, true
		}
	}
	return 0, true
}

// versionPart reads the leading number of a dotted version.
func versionPart(s string) (n int64, rest string, ok bool) {
	if s == "" {
		return 0, "", true
	}
	part := s
	if i := strings.IndexByte(s, '.'); i >= 0 {
		part, rest = s[:i], s[i+1:]
		if rest == "" {
			return 0, "", false
		}
	}
	if part == "" || len(part) > 18 {
		return 0, "", false
	}
	for i := 0; i < len(part); i++ {
		d := part[i]
		if d < '0' || d > '9' {
			return 0, "", false
		}
		n = n*10 + int64(d-'0')
	}
	return n, rest, true
}
