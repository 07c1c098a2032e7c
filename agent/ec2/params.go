package ec2

import (
	"sort"
	"strconv"
	"strings"
)

// EC2's query protocol flattens lists and structures: InstanceId.1,
// InstanceId.2 …; Filter.1.Name, Filter.1.Value.1 …; TagSpecification.1.
// Tag.1.Key. These helpers read them back.

// list is the values of name.1, name.2 … in index order.
func (q *request) list(name string) []string {
	type iv struct {
		i int
		v string
	}
	var out []iv
	for k, vs := range q.params {
		rest, ok := strings.CutPrefix(k, name+".")
		if !ok || len(vs) == 0 {
			continue
		}
		if i, err := strconv.Atoi(rest); err == nil {
			out = append(out, iv{i, vs[0]})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].i < out[b].i })
	vals := make([]string, len(out))
	for i, x := range out {
		vals[i] = x.v
	}
	return vals
}

// indices is the distinct n of name.n.* keys, in order.
func (q *request) indices(name string) []int {
	seen := map[int]bool{}
	for k := range q.params {
		rest, ok := strings.CutPrefix(k, name+".")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(rest, ".")
		if i, err := strconv.Atoi(n); err == nil {
			seen[i] = true
		}
	}
	out := make([]int, 0, len(seen))
	for i := range seen {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// filter is one Filter.n: a name and its values.
type filter struct {
	Name   string
	Values []string
}

// filters reads Filter.n.Name and Filter.n.Value.m.
func (q *request) filters() []filter {
	var out []filter
	for _, i := range q.indices("Filter") {
		p := "Filter." + strconv.Itoa(i)
		out = append(out, filter{Name: q.params.Get(p + ".Name"), Values: q.list(p + ".Value")})
	}
	return out
}

// tagSet reads prefix.Tag.n.Key / .Value (TagSpecification.1, or ""
// for CreateTags's Tag.n).
func (q *request) tagSet(prefix string) map[string]string {
	tags := map[string]string{}
	for _, i := range q.indices(prefix + "Tag") {
		p := prefix + "Tag." + strconv.Itoa(i)
		if k := q.params.Get(p + ".Key"); k != "" {
			tags[k] = q.params.Get(p + ".Value")
		}
	}
	return tags
}

// intParam reads an integer parameter, def when absent.
func (q *request) intParam(name string, def int) (int, error) {
	v := q.params.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, ec2Error(codeInvalidParameterValue, "Invalid value '%s' for %s: not an integer.", v, name)
	}
	return n, nil
}

// required reads a parameter that must be present.
func (q *request) required(name string) (string, error) {
	v := q.params.Get(name)
	if v == "" {
		return "", ec2Error(codeMissingParameter, "The request must contain the parameter %s.", name)
	}
	return v, nil
}

// matches reports whether v is one of values (EC2 filter values; * and
// ? are wildcards).
func matches(values []string, v string) bool {
	for _, want := range values {
		if wildcard(want, v) {
			return true
		}
	}
	return false
}

// wildcard matches EC2's filter patterns: * any run, ? one character.
func wildcard(pattern, s string) bool {
	if pattern == "" {
		return s == ""
	}
	switch pattern[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if wildcard(pattern[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && wildcard(pattern[1:], s[1:])
	}
	return s != "" && s[0] == pattern[0] && wildcard(pattern[1:], s[1:])
}
