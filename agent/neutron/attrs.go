package neutron

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// Request attributes. Each resource declares the attributes a client may
// send (on create, on update, or both) and how each sets the structs
// object; anything else is refused as Neutron refuses it.

// attr is one writable attribute.
type attr struct {
	post, put bool
	set       func(req *structs.NetWriteRequest, v any) error
}

func invalid(name string, format string, args ...any) error {
	return badRequest("Invalid input for %s. Reason: %s.", name, fmt.Sprintf(format, args...))
}

func repr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func asString(name string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", invalid(name, "'%s' is not a valid string", repr(v))
	}
	return s, nil
}

// asName is a string of at most 255 characters.
func asName(name string, v any) (string, error) {
	s, err := asString(name, v)
	if err == nil && len(s) > 255 {
		return "", invalid(name, "'%s' exceeds maximum length of 255", s)
	}
	return s, err
}

// asNullString is a string or null ("").
func asNullString(name string, v any) (string, error) {
	if v == nil {
		return "", nil
	}
	return asString(name, v)
}

// asBool is Neutron's convert_to_boolean.
func asBool(name string, v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(x) {
		case "true", "1":
			return true, nil
		case "false", "0":
			return false, nil
		}
	case json.Number:
		switch x.String() {
		case "1":
			return true, nil
		case "0":
			return false, nil
		}
	}
	return false, invalid(name, "'%s' cannot be converted to boolean", repr(v))
}

func asInt(name string, v any) (int, error) {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.Atoi(x.String()); err == nil {
			return n, nil
		}
	case string:
		if n, err := strconv.Atoi(x); err == nil {
			return n, nil
		}
	}
	return 0, invalid(name, "'%s' is not an integer", repr(v))
}

func asNullInt(name string, v any) (*int, error) {
	if v == nil {
		return nil, nil
	}
	n, err := asInt(name, v)
	return &n, err
}

func asList(name string, v any) ([]any, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, invalid(name, "'%s' is not a list", repr(v))
	}
	return l, nil
}

// asObjects is a list of objects with only the keys allowed.
func asObjects(name string, v any, allowed ...string) ([]map[string]any, error) {
	l, err := asList(name, v)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(l))
	for _, item := range l {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, invalid(name, "'%s' is not a dictionary", repr(item))
		}
		for k := range m {
			if !contains(allowed, k) {
				return nil, invalid(name, "Unrecognized attribute(s) '%s'", k)
			}
		}
		out = append(out, m)
	}
	return out, nil
}

func asStrings(name string, v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	l, err := asList(name, v)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(l))
	for _, item := range l {
		s, err := asString(name, item)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func asFixedIPs(name string, v any) ([]structs.FixedIP, error) {
	objs, err := asObjects(name, v, "subnet_id", "ip_address")
	if err != nil {
		return nil, err
	}
	out := make([]structs.FixedIP, 0, len(objs))
	for _, m := range objs {
		var ip structs.FixedIP
		if ip.SubnetID, err = asNullString(name, m["subnet_id"]); err != nil {
			return nil, err
		}
		if ip.IPAddress, err = asNullString(name, m["ip_address"]); err != nil {
			return nil, err
		}
		if ip.SubnetID == "" && ip.IPAddress == "" {
			return nil, invalid(name, "Exactly one of subnet_id or ip_address is required per fixed IP")
		}
		out = append(out, ip)
	}
	return out, nil
}

func asRoutes(name string, v any) ([]structs.HostRoute, error) {
	objs, err := asObjects(name, v, "destination", "nexthop")
	if err != nil {
		return nil, err
	}
	out := make([]structs.HostRoute, 0, len(objs))
	for _, m := range objs {
		var r structs.HostRoute
		if r.Destination, err = asString(name, m["destination"]); err != nil {
			return nil, err
		}
		if r.NextHop, err = asString(name, m["nexthop"]); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// mustBeNull accepts an attribute Stratus has no use for only when null
// or empty.
func mustBeNull(name string) *attr {
	return &attr{post: true, put: true, set: func(_ *structs.NetWriteRequest, v any) error {
		if v == nil {
			return nil
		}
		if l, ok := v.([]any); ok && len(l) == 0 {
			return nil
		}
		if s, ok := v.(string); ok && s == "" {
			return nil
		}
		return invalid(name, "'%s' is not supported", repr(v))
	}}
}

// ignored accepts an attribute and drops it.
var ignored = &attr{post: true, put: true, set: func(*structs.NetWriteRequest, any) error { return nil }}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// parseObject applies one resource body to a request: every attribute
// known and writable now, project_id and tenant_id agreeing, the
// required ones present.
func parseObject(res *resource, body map[string]any, create bool, req *structs.NetWriteRequest) error {
	var unknown []string
	for k := range body {
		if k == "project_id" || k == "tenant_id" {
			continue
		}
		if res.attrs[k] == nil {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return badRequest("Unrecognized attribute(s) '%s'", strings.Join(unknown, ", "))
	}
	if create {
		for _, k := range res.required {
			if _, ok := body[k]; !ok {
				return badRequest("Failed to parse request. Required attribute '%s' not specified", k)
			}
		}
	}
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	project := ""
	for _, k := range keys {
		v := body[k]
		if k == "project_id" || k == "tenant_id" {
			if !create {
				return badRequest("Cannot update read-only attribute %s", k)
			}
			s, err := asString(k, v)
			if err != nil {
				return err
			}
			if project != "" && s != project {
				return badRequest("'project_id' and 'tenant_id' do not match")
			}
			project = s
			continue
		}
		a := res.attrs[k]
		if create && !a.post || !create && !a.put {
			if create {
				return badRequest("Attribute '%s' not allowed in POST", k)
			}
			return badRequest("Cannot update read-only attribute %s", k)
		}
		if err := a.set(req, v); err != nil {
			return err
		}
		req.Fields = append(req.Fields, k)
	}
	if project != "" {
		res.setProject(req, project)
	}
	return nil
}
