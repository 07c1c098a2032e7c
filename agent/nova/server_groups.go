package nova

import (
	"net/http"
	"regexp"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

const serverGroupRule = "os_compute_api:os-server-groups:"

func (a *API) serverGroupRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /os-server-groups", Access: reader, Policy: serverGroupRule + "index", Handle: a.serverGroupList},
		{Pattern: "POST /os-server-groups", Access: member, Policy: serverGroupRule + "create", Handle: a.serverGroupCreate},
		{Pattern: "GET /os-server-groups/{id}", Access: reader, Policy: serverGroupRule + "show", Handle: a.serverGroupShow},
		{Pattern: "DELETE /os-server-groups/{id}", Access: member, Policy: serverGroupRule + "delete", Handle: a.serverGroupDelete},
	}
}

// serverGroupCreateSchema is Nova's POST /os-server-groups schema: one
// policy in a list before 2.64 (the soft ones from 2.15), then policy
// and rules.
func serverGroupCreateSchema(mv int) *schema {
	props := map[string]*schema{"name": nameSchema}
	required := []string{"name"}
	switch {
	case mv >= 64:
		props["policy"] = &schema{types: tString, enum: structs.ServerGroupPolicies}
		props["rules"] = &schema{types: tObject, props: map[string]*schema{"max_server_per_host": positiveIntSchema}}
		required = append(required, "policy")
	default:
		policies := []string{structs.PolicyAntiAffinity, structs.PolicyAffinity}
		if mv >= 15 {
			policies = append(policies, structs.PolicySoftAntiAffinity, structs.PolicySoftAffinity)
		}
		props["policies"] = &schema{types: tArray, minItems: 1, maxItems: 1, items: &schema{types: tString, enum: policies}}
		required = append(required, "policies")
	}
	return &schema{types: tObject, required: []string{"server_group"}, props: map[string]*schema{
		"server_group": {types: tObject, props: props, required: required},
	}}
}

// serverGroupView is a group in Nova's body at the request's version.
func (q *request) serverGroupView(g *structs.ServerGroup) map[string]any {
	members := g.Members
	if members == nil {
		members = []string{}
	}
	v := map[string]any{"id": g.ID, "name": g.Name, "members": members}
	if q.atLeast(64) {
		rules := map[string]any{}
		if g.MaxServerPerHost > 0 {
			rules["max_server_per_host"] = g.MaxServerPerHost
		}
		v["policy"], v["rules"] = g.Policy, rules
	} else {
		v["policies"], v["metadata"] = []string{g.Policy}, map[string]any{}
	}
	if q.atLeast(13) {
		v["project_id"], v["user_id"] = g.ProjectID, g.UserID
	}
	return v
}

// getServerGroup reads a group the caller may see: its project's, or any
// for admins. Another project's group is not found, as another
// project's server is.
func (q *request) getServerGroup(id string) (*structs.ServerGroup, error) {
	var out structs.SingleServerGroupResponse
	err := q.call("ServerGroup.Get", &structs.ServerGroupSpecificRequest{GroupID: id}, &out)
	if err == nil && !q.isAdmin() && out.Group.ProjectID != q.token.ProjectID {
		err = structs.Errorf(structs.KindNotFound, "server group %q not found", id)
	}
	if err != nil {
		return nil, notFoundAs(err, "Instance group %s could not be found.", id)
	}
	return out.Group, nil
}

// serverGroupList answers GET /os-server-groups: the project's groups,
// or every project's for an admin asking all_projects (a member's
// all_projects is ignored, as in Nova), sliced by offset and limit.
func (a *API) serverGroupList(q *request) (*reply, error) {
	if err := q.checkQuery("all_projects", "limit", "offset"); err != nil {
		return nil, err
	}
	offset, limit, err := q.offsetLimit()
	if err != nil {
		return nil, err
	}
	v := q.query()
	project := q.token.ProjectID
	if v.Has("all_projects") && q.isAdmin() {
		project = ""
	}
	var out structs.ServerGroupListResponse
	if err := q.call("ServerGroup.List", &structs.ServerGroupListRequest{ProjectID: project}, &out); err != nil {
		return nil, err
	}
	groups := out.Groups
	groups = groups[min(offset, len(groups)):]
	groups = groups[:min(limit, len(groups))]
	views := make([]any, 0, len(groups))
	for _, g := range groups {
		views = append(views, q.serverGroupView(g))
	}
	return okReply(map[string]any{"server_groups": views})
}

func (a *API) serverGroupShow(q *request) (*reply, error) {
	g, err := q.getServerGroup(q.param("id"))
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"server_group": q.serverGroupView(g)})
}

// serverGroupCreate answers POST /os-server-groups (200, as Nova). Over
// the server_groups quota it is Nova's 403.
func (a *API) serverGroupCreate(q *request) (*reply, error) {
	body, err := decodeBody(q, serverGroupCreateSchema(q.mv))
	if err != nil {
		return nil, err
	}
	in := object(body, "server_group")
	g := &structs.ServerGroup{ProjectID: q.token.ProjectID, UserID: q.token.UserID}
	g.Name, _ = stringOf(in, "name")
	if q.atLeast(64) {
		g.Policy, _ = stringOf(in, "policy")
		rules := object(in, "rules")
		if len(rules) > 0 && g.Policy != structs.PolicyAntiAffinity {
			return nil, badRequest("Only anti-affinity policy supports rules.")
		}
		if v, ok := rules["max_server_per_host"]; ok {
			g.MaxServerPerHost = int(intOf(v))
		}
	} else {
		g.Policy, _ = in["policies"].([]any)[0].(string)
	}
	var out structs.SingleServerGroupResponse
	if err := q.call("ServerGroup.Create", &structs.ServerGroupCreateRequest{Group: g}, &out); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"server_group": q.serverGroupView(out.Group)})
}

// serverGroupDelete answers DELETE /os-server-groups/{id} (204); the
// members keep running.
func (a *API) serverGroupDelete(q *request) (*reply, error) {
	g, err := q.getServerGroup(q.param("id"))
	if err != nil {
		return nil, err
	}
	if err := q.call("ServerGroup.Delete", &structs.ServerGroupDeleteRequest{GroupID: g.ID}, &structs.GenericResponse{}); err != nil {
		return nil, notFoundAs(err, "Instance group %s could not be found.", g.ID)
	}
	return noContent()
}

// serverGroupsOf is a server's server_groups (2.71): the group it was
// created in, if any.
func serverGroupsOf(inst *structs.Instance) []string {
	if inst.ServerGroupID == "" {
		return []string{}
	}
	return []string{inst.ServerGroupID}
}

// schedulerHintsSchema is Nova's os:scheduler_hints schema: the hints
// Nova knows are checked, any other is accepted and ignored.
func schedulerHintsSchema() *schema {
	uuidList := &schema{types: tArray, items: &schema{types: tString, format: checkUUID}}
	return &schema{types: tObject, open: true, props: map[string]*schema{
		"group":              {types: tString, format: checkUUID},
		"different_host":     {types: tString | tArray, format: checkUUID, items: uuidList.items},
		"same_host":          {types: tString | tArray, items: uuidList.items},
		"query":              {types: tString | tObject, open: true},
		"target_cell":        nameSchema,
		"different_cell":     {types: tString | tArray, items: &schema{types: tString}},
		"build_near_host_ip": {types: tString, format: checkIPAddress},
		"cidr":               {types: tString, pattern: cidrHintPattern},
	}}
}

var cidrHintPattern = regexp.MustCompile(`^/[0-9a-f.:]+$`)

// checkIPAddress is Nova's ip_address: an IPv4 or an IPv6 address.
func checkIPAddress(s string) string {
	if checkIPv4(s) == "" || checkIPv6(s) == "" {
		return ""
	}
	return pyRepr(s) + " is not valid under any of the given schemas"
}

// schedulerHints reads a create body's hints (os:scheduler_hints, or
// the older OS-SCH-HNT:scheduler_hints): group, same_host and
// different_host, which Stratus honours, and the rest, kept for 2.100's
// view. The group must be one the caller can see; the scheduler
// resolves the others.
func (q *request) schedulerHints(body map[string]any) (*structs.SchedulerHints, error) {
	in := object(body, "os:scheduler_hints")
	if in == nil {
		in = object(body, "OS-SCH-HNT:scheduler_hints")
	}
	if len(in) == 0 {
		return nil, nil
	}
	h := &structs.SchedulerHints{SameHost: stringList(in["same_host"]), DifferentHost: stringList(in["different_host"])}
	if group, ok := stringOf(in, "group"); ok {
		g, err := q.getServerGroup(group)
		if err != nil {
			if isStatus(err, http.StatusNotFound) {
				return nil, badRequest("Instance group %s could not be found.", group)
			}
			return nil, err
		}
		h.Group = g.ID
	}
	for k, v := range in {
		switch k {
		case "group", "same_host", "different_host":
			continue
		}
		if h.Other == nil {
			h.Other = map[string][]string{}
		}
		h.Other[k] = hintValues(v)
	}
	if err := h.ValidateOther(); err != nil {
		return nil, badRequest("Invalid input for field/attribute os:scheduler_hints. %s", structs.Message(err))
	}
	if h.Empty() {
		return nil, nil
	}
	return h, nil
}

// hintValues is how Nova's request spec keeps a hint: a list as it is,
// anything else as a list of one, each element as Python's str() of it.
func hintValues(v any) []string {
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		out = append(out, pyStr(e))
	}
	return out
}

// stringList reads a hint given as one string or a list of them.
func stringList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// requestedHost reads 2.74's host and hypervisor_hostname (admin only):
// the host the server must be built on. In Stratus a host is its own
// hypervisor, so when both are given they must name the same one.
func (q *request) requestedHost(in map[string]any) (string, error) {
	host, _ := stringOf(in, "host")
	node, _ := stringOf(in, "hypervisor_hostname")
	if host == "" && node == "" {
		return "", nil
	}
	if !q.isAdmin() {
		return "", policyFault("compute:servers:create:requested_destination")
	}
	return q.targetHost(host, node)
}

// targetHost resolves a host and a node name (either may be empty) to
// the one host they name, 400 when there is none.
func (q *request) targetHost(host, node string) (string, error) {
	var found *structs.Host
	for _, n := range []struct{ name, what string }{{host, "host"}, {node, "node"}} {
		if n.name == "" {
			continue
		}
		var out structs.SingleHostResponse
		err := q.call("Host.Get", &structs.HostSpecificRequest{HostID: n.name}, &out)
		if structs.KindOf(err) == structs.KindNotFound || (err == nil && found != nil && out.Host.ID != found.ID) {
			return "", badRequest("Compute %s %s could not be found.", n.what, n.name)
		}
		if err != nil {
			return "", err
		}
		found = out.Host
	}
	return found.ID, nil
}
