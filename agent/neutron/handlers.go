package neutron

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// The handlers every resource shares: list (with Neutron's filters,
// fields, sorting and pagination), show, create (one or bulk), update
// and delete.

// listParams are the query parameters that are not filters.
var listParams = map[string]bool{"fields": true, "sort_key": true, "sort_dir": true, "limit": true, "marker": true, "page_reverse": true}

// filterAliases are filters Neutron knows that no view shows as such.
var filterAliases = map[string]bool{"tags": true, "tags-any": true, "not-tags": true, "not-tags-any": true}

func (a *API) list(q *request, res *resource) (*reply, error) {
	vals := q.r.URL.Query()
	args := &structs.NetListRequest{Kind: res.kind, Caller: q.caller()}
	if ids := vals["id"]; len(ids) > 0 {
		args.IDs = ids
	}
	if nets := vals["network_id"]; len(nets) == 1 && res.kind != structs.NetKindNetwork {
		args.NetworkID = nets[0]
	}
	if res.kind == structs.NetKindPort && len(vals["device_id"]) > 0 {
		args.DeviceIDs = vals["device_id"]
	}
	var out structs.NetListResponse
	if err := q.call("Net.List", args, &out); err != nil {
		return nil, err
	}
	views := res.views(q, &out.NetObjects)
	known := knownAttributes(q, res)
	for key, want := range vals {
		if listParams[key] {
			continue
		}
		if !known[key] && !filterAliases[key] && !(res.kind == structs.NetKindPort && key == "fixed_ips") {
			return nil, badRequest("[%s] is invalid attribute for filtering", key)
		}
		views = filterViews(views, key, want)
	}
	if err := sortViews(views, vals, known); err != nil {
		return nil, err
	}
	page, links, err := q.paginate(res, views, vals)
	if err != nil {
		return nil, err
	}
	items := make([]any, 0, len(page))
	for _, v := range page {
		items = append(items, selectFields(v, vals["fields"]))
	}
	body := map[string]any{res.plural: items}
	if links != nil {
		body[res.plural+"_links"] = links
	}
	return okReply(body)
}

// knownAttributes are the attributes of a resource's view, for
// validating filters and sort keys.
func knownAttributes(q *request, res *resource) map[string]bool {
	objs := &structs.NetObjects{Networks: []*structs.Network{{}}, Subnets: []*structs.Subnet{{}}, Ports: []*structs.Port{{}},
		SecurityGroups: []*structs.SecurityGroup{{}}, SecurityGroupRules: []*structs.SecurityGroupRule{{}},
		FloatingIPs: []*structs.FloatingIP{{}}, Routers: []*structs.Router{{}}}
	out := map[string]bool{}
	for _, v := range res.views(q, objs) {
		for k := range v {
			out[k] = true
		}
	}
	return out
}

// filterViews keeps the views whose attribute matches one of the values.
func filterViews(views []map[string]any, key string, want []string) []map[string]any {
	out := views[:0:0]
	for _, v := range views {
		ok := false
		switch key {
		case "tags", "tags-any":
			ok = false
		case "not-tags", "not-tags-any":
			ok = true
		case "fixed_ips":
			ok = matchFixedIPs(v["fixed_ips"], want)
		default:
			for _, w := range want {
				ok = ok || matches(v[key], w)
			}
		}
		if ok {
			out = append(out, v)
		}
	}
	return out
}

// matches compares a view's value with a filter's string.
func matches(v any, s string) bool {
	switch x := v.(type) {
	case nil:
		return s == "" || s == "None"
	case string:
		return x == s
	case bool:
		b, err := asBool("", s)
		return err == nil && b == x
	case int:
		return strconv.Itoa(x) == s
	case uint64:
		return strconv.FormatUint(x, 10) == s
	case []any:
		for _, e := range x {
			if matches(e, s) {
				return true
			}
		}
	}
	return false
}

// matchFixedIPs is the ports' fixed_ips filter: "ip_address=X",
// "subnet_id=Y" or "ip_address_substr=Z", any of them.
func matchFixedIPs(v any, want []string) bool {
	ips, _ := v.([]any)
	for _, w := range want {
		k, val, _ := strings.Cut(w, "=")
		for _, ip := range ips {
			m, _ := ip.(map[string]any)
			switch k {
			case "ip_address", "subnet_id":
				if m[k] == val {
					return true
				}
			case "ip_address_substr":
				if s, _ := m["ip_address"].(string); strings.Contains(s, val) {
					return true
				}
			}
		}
	}
	return false
}

// sortViews sorts by Neutron's sort_key and sort_dir (ascending by
// default), then by id; without sort keys the servers' order (oldest
// first) stays.
func sortViews(views []map[string]any, vals url.Values, known map[string]bool) error {
	keys, dirs := vals["sort_key"], vals["sort_dir"]
	if len(keys) == 0 {
		if len(dirs) > 0 {
			return badRequest("The number of sort_keys and sort_dirs must be same")
		}
		return nil
	}
	if len(dirs) > 0 && len(dirs) != len(keys) {
		return badRequest("The number of sort_keys and sort_dirs must be same")
	}
	for i, k := range keys {
		if !known[k] {
			return badRequest("%s is an invalid attribute for sort_keys", k)
		}
		if len(dirs) > 0 && dirs[i] != "asc" && dirs[i] != "desc" {
			return badRequest("%s is an invalid value for sort_dirs, valid value is 'asc' and 'desc'", dirs[i])
		}
	}
	sort.SliceStable(views, func(i, j int) bool {
		for n, k := range keys {
			c := compare(views[i][k], views[j][k])
			if c == 0 {
				continue
			}
			if len(dirs) > 0 && dirs[n] == "desc" {
				return c > 0
			}
			return c < 0
		}
		return compare(views[i]["id"], views[j]["id"]) < 0
	})
	return nil
}

// compare orders two view values: null first, then by type.
func compare(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	num := func(v any) (float64, bool) {
		switch x := v.(type) {
		case int:
			return float64(x), true
		case uint64:
			return float64(x), true
		case bool:
			if x {
				return 1, true
			}
			return 0, true
		}
		return math.NaN(), false
	}
	if x, ok := num(a); ok {
		if y, ok := num(b); ok {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// paginate cuts a page of views after (or, reversed, before) the
// marker, with Neutron's next and previous links.
func (q *request) paginate(res *resource, views []map[string]any, vals url.Values) ([]map[string]any, []any, error) {
	limit := 0
	if s := vals.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return nil, nil, badRequest("Bad limit request: Limit must be an integer 0 or greater and not '%s'", s)
		}
		limit = n
	}
	reverse := false
	if s := vals.Get("page_reverse"); s != "" {
		b, err := asBool("page_reverse", s)
		if err != nil {
			return nil, nil, err
		}
		reverse = b
	}
	marker := vals.Get("marker")
	pos := -1
	if marker != "" {
		for i, v := range views {
			if v["id"] == marker {
				pos = i
			}
		}
		if pos < 0 {
			return nil, nil, res.notFound(marker)
		}
	}
	if limit == 0 {
		switch {
		case marker == "":
			return views, nil, nil
		case reverse:
			return views[:pos], nil, nil
		default:
			return views[pos+1:], nil, nil
		}
	}
	var page []map[string]any
	moreBefore, moreAfter := false, false
	if reverse {
		end := len(views)
		if pos >= 0 {
			end = pos
		}
		start := max(0, end-limit)
		page = views[start:end]
		moreBefore, moreAfter = start > 0, true
	} else {
		start := pos + 1
		end := min(len(views), start+limit)
		page = views[start:end]
		moreBefore, moreAfter = true, end < len(views)
	}
	if len(page) == 0 {
		return page, []any{}, nil
	}
	link := func(rel, marker string, back bool) map[string]any {
		v := url.Values{}
		for k, vs := range vals {
			if k != "marker" && k != "page_reverse" && k != "limit" {
				v[k] = vs
			}
		}
		v.Set("limit", strconv.Itoa(limit))
		v.Set("marker", marker)
		if back {
			v.Set("page_reverse", "True")
		}
		return map[string]any{"href": q.base() + "/v2.0/" + res.path + "?" + v.Encode(), "rel": rel}
	}
	links := []any{}
	if moreAfter {
		links = append(links, link("next", page[len(page)-1]["id"].(string), false))
	}
	if moreBefore {
		links = append(links, link("previous", page[0]["id"].(string), true))
	}
	return page, links, nil
}

// selectFields keeps the fields asked for (all without any).
func selectFields(v map[string]any, fields []string) map[string]any {
	if len(fields) == 0 {
		return v
	}
	out := map[string]any{}
	for _, f := range fields {
		for _, name := range strings.Split(f, ",") {
			if val, ok := v[name]; ok {
				out[name] = val
			}
		}
	}
	return out
}

// get reads one object the caller may see.
func (q *request) get(res *resource, id string) (*structs.NetObjects, error) {
	var out structs.NetListResponse
	if err := q.call("Net.Get", &structs.NetGetRequest{Kind: res.kind, ID: id, Caller: q.caller()}, &out); err != nil {
		return nil, err
	}
	return &out.NetObjects, nil
}

func (a *API) show(q *request, res *resource) (*reply, error) {
	objs, err := q.get(res, q.param("id"))
	if err != nil {
		return nil, err
	}
	views := res.views(q, objs)
	if len(views) == 0 {
		return nil, res.notFound(q.param("id"))
	}
	return okReply(map[string]any{res.singular: selectFields(views[0], q.r.URL.Query()["fields"])})
}

// writeRequest parses one object of a create or update body.
func (q *request) writeRequest(res *resource, raw any, create bool) (*structs.NetWriteRequest, error) {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, badRequest("Invalid format: %s is not a dictionary", repr(raw))
	}
	req := &structs.NetWriteRequest{Kind: res.kind, Caller: q.caller()}
	res.init(req)
	if err := parseObject(res, obj, create, req); err != nil {
		return nil, err
	}
	return req, nil
}

func (a *API) create(q *request, res *resource) (*reply, error) {
	body, err := q.decodeBody()
	if err != nil {
		return nil, err
	}
	if one, ok := body[res.singular]; ok && len(body) == 1 {
		req, err := q.writeRequest(res, one, true)
		if err != nil {
			return nil, err
		}
		var out structs.NetWriteResponse
		if err := q.call("Net.Create", req, &out); err != nil {
			return nil, err
		}
		return createdReply(map[string]any{res.singular: res.views(q, &out.NetObjects)[0]})
	}
	many, ok := body[res.plural].([]any)
	if !ok || len(body) != 1 {
		return nil, badRequest("Unable to find '%s' in request body", res.singular)
	}
	if len(many) == 0 {
		return nil, badRequest("Resources required")
	}
	// A bulk create is all or nothing: what was created before a failure
	// is deleted again.
	var reqs []*structs.NetWriteRequest
	for _, raw := range many {
		item, ok := raw.(map[string]any)
		if !ok {
			return nil, badRequest("Invalid format: %s is not a dictionary", repr(raw))
		}
		inner, ok := item[res.singular]
		if !ok {
			inner = item
		}
		req, err := q.writeRequest(res, inner, true)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, req)
	}
	var views []any
	var created []string
	for _, req := range reqs {
		var out structs.NetWriteResponse
		if err := q.call("Net.Create", req, &out); err != nil {
			for _, id := range created {
				_ = q.call("Net.Delete", &structs.NetWriteRequest{Kind: res.kind, ID: id, Caller: q.caller()}, &structs.NetWriteResponse{})
			}
			return nil, err
		}
		v := res.views(q, &out.NetObjects)[0]
		created = append(created, v["id"].(string))
		views = append(views, v)
	}
	return createdReply(map[string]any{res.plural: views})
}

func (a *API) update(q *request, res *resource) (*reply, error) {
	body, err := q.decodeBody()
	if err != nil {
		return nil, err
	}
	one, ok := body[res.singular]
	if !ok || len(body) != 1 {
		return nil, badRequest("Unable to find '%s' in request body", res.singular)
	}
	req, err := q.writeRequest(res, one, false)
	if err != nil {
		return nil, err
	}
	req.ID = q.param("id")
	var out structs.NetWriteResponse
	if err := q.call("Net.Update", req, &out); err != nil {
		return nil, err
	}
	return okReply(map[string]any{res.singular: res.views(q, &out.NetObjects)[0]})
}

func (a *API) remove(q *request, res *resource) (*reply, error) {
	if err := q.call("Net.Delete", &structs.NetWriteRequest{Kind: res.kind, ID: q.param("id"), Caller: q.caller()}, &structs.NetWriteResponse{}); err != nil {
		return nil, err
	}
	return noContent()
}

// routerInterface answers add_router_interface and
// remove_router_interface.
func (a *API) routerInterface(q *request, remove bool) (*reply, error) {
	body, err := q.decodeBody()
	if err != nil {
		return nil, err
	}
	args := &structs.RouterInterfaceRequest{RouterID: q.param("id"), Remove: remove, Caller: q.caller()}
	for k, v := range body {
		var err error
		switch k {
		case "subnet_id":
			args.SubnetID, err = asNullString(k, v)
		case "port_id":
			args.PortID, err = asNullString(k, v)
		default:
			err = badRequest("Bad router request: Unrecognized attribute(s) '%s'", k)
		}
		if err != nil {
			return nil, err
		}
	}
	var out structs.RouterInterfaceResponse
	if err := q.call("Net.RouterInterface", args, &out); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"id": out.RouterID, "tenant_id": out.ProjectID, "project_id": out.ProjectID,
		"network_id": out.NetworkID, "port_id": out.PortID, "subnet_id": out.SubnetID, "subnet_ids": strings0(out.SubnetIDs)})
}

func (a *API) addRouterInterface(q *request) (*reply, error)    { return a.routerInterface(q, false) }
func (a *API) removeRouterInterface(q *request) (*reply, error) { return a.routerInterface(q, true) }

// --- quotas ---

// quotaProject resolves a quota URL's project: "tenant" or "project"
// is the caller's.
func (q *request) quotaProject() string {
	p := q.param("project")
	if p == "tenant" || p == "project" {
		return q.token.ProjectID
	}
	return p
}

func quotaView(limits map[string]int64) map[string]any {
	out := map[string]any{}
	for k, v := range limits {
		out[k] = v
	}
	return out
}

// quotaShow answers GET /v2.0/quotas/{project}; /quotas/tenant is
// Neutron's "which project am I" ({"tenant": {"tenant_id"}}).
func (a *API) quotaShow(q *request) (*reply, error) {
	if q.param("project") == "tenant" {
		return okReply(map[string]any{"tenant": map[string]any{"tenant_id": q.token.ProjectID}})
	}
	var out structs.NetQuotaResponse
	if err := q.call("Net.Quotas", &structs.NetQuotaRequest{ProjectID: q.quotaProject(), Caller: q.caller()}, &out); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"quota": quotaView(out.Limits)})
}

func (a *API) quotaDefault(q *request) (*reply, error) {
	var out structs.NetQuotaResponse
	if err := q.call("Net.Quotas", &structs.NetQuotaRequest{Caller: q.caller()}, &out); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"quota": quotaView(out.Limits)})
}

func (a *API) quotaDetails(q *request) (*reply, error) {
	var out structs.NetQuotaResponse
	if err := q.call("Net.Quotas", &structs.NetQuotaRequest{ProjectID: q.quotaProject(), Usage: true, Caller: q.caller()}, &out); err != nil {
		return nil, err
	}
	details := map[string]any{}
	for k, v := range out.Limits {
		details[k] = map[string]any{"limit": v, "used": out.Usage[k], "reserved": 0}
	}
	return okReply(map[string]any{"quota": details})
}

// quotaList answers an admin (the route is admin-only): Stratus keeps no
// list of projects with quotas set, so the list is empty.
func (a *API) quotaList(q *request) (*reply, error) {
	return okReply(map[string]any{"quotas": []any{}})
}

func (a *API) quotaUpdate(q *request) (*reply, error) {
	body, err := q.decodeBody()
	if err != nil {
		return nil, err
	}
	raw, ok := body["quota"].(map[string]any)
	if !ok {
		return nil, badRequest("Unable to find 'quota' in request body")
	}
	limits := map[string]int64{}
	for k, v := range raw {
		if k == "check_limit" || k == "force" {
			continue
		}
		if _, ok := structs.NetworkDefaultQuotas[k]; !ok {
			return nil, badRequest("Unrecognized attribute(s) '%s'", k)
		}
		n, err := asInt(k, v)
		if err != nil {
			return nil, err
		}
		limits[k] = int64(n)
	}
	var out structs.NetQuotaResponse
	if err := q.call("Net.UpdateQuotas", &structs.NetQuotaUpdateRequest{ProjectID: q.quotaProject(), Limits: limits, Caller: q.caller()}, &out); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"quota": quotaView(out.Limits)})
}

func (a *API) quotaDelete(q *request) (*reply, error) {
	if err := q.call("Net.UpdateQuotas", &structs.NetQuotaUpdateRequest{ProjectID: q.quotaProject(), Delete: true, Caller: q.caller()}, &structs.NetQuotaResponse{}); err != nil {
		return nil, err
	}
	return noContent()
}

// --- auto-allocated topology ---

func (a *API) autoTopologyShow(q *request) (*reply, error) {
	project := q.param("project")
	if project == "tenant" || project == "project" {
		project = q.token.ProjectID
	}
	var out structs.AutoTopologyResponse
	if err := q.call("Net.AutoTopology", &structs.AutoTopologyRequest{ProjectID: project, Create: true, Caller: q.caller()}, &out); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"auto_allocated_topology": map[string]any{"id": out.NetworkID, "tenant_id": out.ProjectID, "project_id": out.ProjectID}})
}

func (a *API) autoTopologyDelete(q *request) (*reply, error) {
	return nil, apiErrorf(http.StatusNotImplemented, "HTTPNotImplemented", "Deleting an auto-allocated topology is not supported; delete its router, network and subnet.")
}
