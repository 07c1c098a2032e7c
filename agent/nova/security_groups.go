package nova

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// Nova's security group proxies to the Networking API, gone from 2.36:
// os-security-groups, os-security-group-rules and a server's groups, and
// the server actions addSecurityGroup and removeSecurityGroup.

const groupRule = "os_compute_api:os-security-groups"

func (a *API) securityGroupRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /os-security-groups", MaxVersion: proxyMax, Access: reader, Policy: groupRule + ":get", Handle: a.groupList},
		{Pattern: "POST /os-security-groups", MaxVersion: proxyMax, Access: member, Policy: groupRule + ":create", Handle: a.groupCreate},
		{Pattern: "GET /os-security-groups/{sg}", MaxVersion: proxyMax, Access: reader, Policy: groupRule + ":show", Handle: a.groupShow},
		{Pattern: "PUT /os-security-groups/{sg}", MaxVersion: proxyMax, Access: member, Policy: groupRule + ":update", Handle: a.groupUpdate},
		{Pattern: "DELETE /os-security-groups/{sg}", MaxVersion: proxyMax, Access: member, Policy: groupRule + ":delete", Handle: a.groupDelete},
		{Pattern: "POST /os-security-group-rules", MaxVersion: proxyMax, Access: member, Policy: groupRule + ":rule:create", Handle: a.ruleCreate},
		{Pattern: "DELETE /os-security-group-rules/{rule}", MaxVersion: proxyMax, Access: member, Policy: groupRule + ":rule:delete", Handle: a.ruleDelete},
		{Pattern: "GET /servers/{id}/os-security-groups", MaxVersion: proxyMax, Access: reader, Policy: groupRule + ":list", Handle: a.serverGroupsList},
	}
}

// novaRuleView is a rule as Nova's proxy shows it.
func novaRuleView(r *structs.SecurityGroupRule, groups map[string]*structs.SecurityGroup) map[string]any {
	v := map[string]any{"id": r.ID, "parent_group_id": r.SecurityGroupID, "ip_protocol": nullString(r.Protocol),
		"from_port": intOrNil(r.PortRangeMin), "to_port": intOrNil(r.PortRangeMax), "group": map[string]any{}, "ip_range": map[string]any{}}
	if r.RemoteGroupID != "" {
		if g := groups[r.RemoteGroupID]; g != nil {
			v["group"] = map[string]any{"name": g.Name, "tenant_id": g.ProjectID}
		}
	} else if r.RemoteIPPrefix != "" {
		v["ip_range"] = map[string]any{"cidr": r.RemoteIPPrefix}
	} else {
		cidr := "0.0.0.0/0"
		if r.EtherType == structs.EtherTypeIPv6 {
			cidr = "::/0"
		}
		v["ip_range"] = map[string]any{"cidr": cidr}
	}
	return v
}

func intOrNil(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// novaGroupView is a group as Nova's proxy shows it: its ingress rules.
func novaGroupView(g *structs.SecurityGroup, rules []*structs.SecurityGroupRule, groups map[string]*structs.SecurityGroup) map[string]any {
	out := []any{}
	for _, r := range rules {
		if r.SecurityGroupID == g.ID && r.Direction == structs.DirectionIngress {
			out = append(out, novaRuleView(r, groups))
		}
	}
	return map[string]any{"id": g.ID, "name": g.Name, "description": g.Description, "tenant_id": g.ProjectID, "rules": out}
}

// groupsByID lists the caller's groups (with their rules), by id.
func (q *request) groupsByID() (*structs.NetListResponse, map[string]*structs.SecurityGroup, error) {
	out, err := q.netObjects(structs.NetKindSecurityGroup)
	if err != nil {
		return nil, nil, err
	}
	byID := map[string]*structs.SecurityGroup{}
	for _, g := range out.SecurityGroups {
		byID[g.ID] = g
	}
	return out, byID, nil
}

func (a *API) groupList(q *request) (*reply, error) {
	out, byID, err := q.groupsByID()
	if err != nil {
		return nil, err
	}
	list := []any{}
	for _, g := range out.SecurityGroups {
		if g.ProjectID == q.token.ProjectID {
			list = append(list, novaGroupView(g, out.SecurityGroupRules, byID))
		}
	}
	return okReply(map[string]any{"security_groups": list})
}

func (q *request) showGroup(id string, status int) (*reply, error) {
	out, byID, err := q.groupsByID()
	if err != nil {
		return nil, err
	}
	g := byID[id]
	if g == nil {
		return nil, notFound("Security group %s not found.", id)
	}
	return &reply{status: status, body: map[string]any{"security_group": novaGroupView(g, out.SecurityGroupRules, byID)}}, nil
}

func (a *API) groupShow(q *request) (*reply, error) { return q.showGroup(q.param("sg"), http.StatusOK) }

var groupSchema = &schema{types: tObject, required: []string{"security_group"}, props: map[string]*schema{
	"security_group": {types: tObject, required: []string{"name", "description"}, props: map[string]*schema{
		"name": {types: tString, maxLen: 255}, "description": {types: tString, maxLen: 255}}}}}

func (a *API) groupCreate(q *request) (*reply, error) {
	body, err := decodeBody(q, groupSchema)
	if err != nil {
		return nil, err
	}
	in := object(body, "security_group")
	g := &structs.SecurityGroup{Stateful: true}
	g.Name, _ = stringOf(in, "name")
	g.Description, _ = stringOf(in, "description")
	var out structs.NetWriteResponse
	if err := q.call("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroup, Caller: q.netCaller(), SecurityGroup: g}, &out); err != nil {
		if k := structs.KindOf(err); k == structs.KindConflict || k == structs.KindInvalid {
			return nil, badRequest("%s", structs.Message(err))
		}
		return nil, netFault(err)
	}
	return q.showGroup(out.SecurityGroups[0].ID, http.StatusOK)
}

func (a *API) groupUpdate(q *request) (*reply, error) {
	body, err := decodeBody(q, groupSchema)
	if err != nil {
		return nil, err
	}
	in := object(body, "security_group")
	g := &structs.SecurityGroup{}
	g.Name, _ = stringOf(in, "name")
	g.Description, _ = stringOf(in, "description")
	err = q.call("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroup, ID: q.param("sg"), Caller: q.netCaller(),
		Fields: []string{"name", "description"}, SecurityGroup: g}, &structs.NetWriteResponse{})
	if structs.KindOf(err) == structs.KindNotFound {
		return nil, notFound("Security group %s not found.", q.param("sg"))
	}
	if err != nil {
		return nil, badRequest("%s", structs.Message(err))
	}
	return q.showGroup(q.param("sg"), http.StatusOK)
}

func (a *API) groupDelete(q *request) (*reply, error) {
	err := q.call("Net.Delete", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroup, ID: q.param("sg"), Caller: q.netCaller()},
		&structs.NetWriteResponse{})
	switch {
	case structs.KindOf(err) == structs.KindNotFound:
		return nil, notFound("Security group %s not found.", q.param("sg"))
	case err != nil && structs.KindOf(err) == structs.KindConflict:
		return nil, badRequest("%s", structs.Message(err))
	case err != nil:
		return nil, err
	}
	return acceptedReply(nil)
}

var ruleSchema = &schema{types: tObject, required: []string{"security_group_rule"}, props: map[string]*schema{
	"security_group_rule": {types: tObject, required: []string{"parent_group_id"}, props: map[string]*schema{
		"parent_group_id": {types: tString}, "ip_protocol": {types: tString | tNull},
		"from_port": {types: tInteger | tString | tNull}, "to_port": {types: tInteger | tString | tNull},
		"cidr": {types: tString | tNull}, "group_id": {types: tString | tNull}}}}}

// ruleCreate answers POST /os-security-group-rules: an ingress rule, as
// Nova's proxy made one (ICMP's -1 is any).
func (a *API) ruleCreate(q *request) (*reply, error) {
	body, err := decodeBody(q, ruleSchema)
	if err != nil {
		return nil, err
	}
	in := object(body, "security_group_rule")
	r := &structs.SecurityGroupRule{Direction: structs.DirectionIngress}
	r.SecurityGroupID, _ = stringOf(in, "parent_group_id")
	r.Protocol, _ = stringOf(in, "ip_protocol")
	r.RemoteGroupID, _ = stringOf(in, "group_id")
	r.RemoteIPPrefix, _ = stringOf(in, "cidr")
	if r.RemoteIPPrefix != "" {
		if r.RemoteIPPrefix, err = parseCIDR(r.RemoteIPPrefix); err != nil {
			return nil, err
		}
	}
	if r.RemoteIPPrefix == "" && r.RemoteGroupID == "" {
		r.RemoteIPPrefix = "0.0.0.0/0"
	}
	if strings.Contains(r.RemoteIPPrefix, ":") {
		r.EtherType = structs.EtherTypeIPv6
	}
	for k, dst := range map[string]**int{"from_port": &r.PortRangeMin, "to_port": &r.PortRangeMax} {
		if v, ok := in[k]; ok && v != nil {
			n := int(intOf(v))
			if n == -1 && strings.EqualFold(r.Protocol, "icmp") {
				continue
			}
			*dst = &n
		}
	}
	if (r.PortRangeMin == nil) != (r.PortRangeMax == nil) && !strings.EqualFold(r.Protocol, "icmp") {
		return nil, badRequest("Invalid port range %v:%v. Both from_port and to_port must be given.", in["from_port"], in["to_port"])
	}
	var out structs.NetWriteResponse
	if err := q.call("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroupRule, Caller: q.netCaller(), Rule: r}, &out); err != nil {
		switch structs.KindOf(err) {
		case structs.KindNotFound:
			return nil, notFound("Security group %s not found.", r.SecurityGroupID)
		case structs.KindInvalid, structs.KindConflict:
			return nil, badRequest("%s", structs.Message(err))
		}
		return nil, netFault(err)
	}
	_, byID, err := q.groupsByID()
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"security_group_rule": novaRuleView(out.SecurityGroupRules[0], byID)})
}

func (a *API) ruleDelete(q *request) (*reply, error) {
	err := q.call("Net.Delete", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroupRule, ID: q.param("rule"), Caller: q.netCaller()},
		&structs.NetWriteResponse{})
	if structs.KindOf(err) == structs.KindNotFound {
		return nil, notFound("Rule (%s) not found", q.param("rule"))
	}
	if err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

// serverGroupsList answers GET /servers/{id}/os-security-groups.
func (a *API) serverGroupsList(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	out, byID, err := q.groupsByID()
	if err != nil {
		return nil, err
	}
	list := []any{}
	seen := map[string]bool{}
	for _, id := range q.instanceGroupIDs(inst) {
		if g := byID[id]; g != nil && !seen[id] {
			seen[id] = true
			list = append(list, novaGroupView(g, out.SecurityGroupRules, byID))
		}
	}
	return okReply(map[string]any{"security_groups": list})
}

// instancePorts lists a server's ports.
func (q *request) instancePorts(inst *structs.Instance) ([]*structs.Port, error) {
	var out structs.NetListResponse
	err := q.call("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, DeviceIDs: []string{inst.ID},
		Caller: structs.NetCaller{ProjectID: inst.ProjectID, Admin: q.isAdmin()}}, &out)
	var ports []*structs.Port
	for _, p := range out.Ports {
		if p.IsCompute() {
			ports = append(ports, p)
		}
	}
	return ports, err
}

func (q *request) instanceGroupIDs(inst *structs.Instance) []string {
	ports, _ := q.instancePorts(inst)
	var out []string
	for _, p := range ports {
		out = append(out, p.SecurityGroups...)
	}
	return out
}

var groupActionSchema = &schema{types: tObject, required: []string{"name"}, props: map[string]*schema{
	"name": {types: tString, minLen: 1}}}

// actSecurityGroup is addSecurityGroup (add) or removeSecurityGroup:
// the group, by name or id, on every port of the server.
func actSecurityGroup(add bool) func(*request, *structs.Instance, any) (*reply, error) {
	return func(q *request, inst *structs.Instance, arg any) (*reply, error) {
		name, _ := stringOf(arg.(map[string]any), "name")
		_, byID, err := q.groupsByID()
		if err != nil {
			return nil, err
		}
		var group *structs.SecurityGroup
		for _, g := range byID {
			if (g.ID == name || g.Name == name) && g.ProjectID == inst.ProjectID {
				group = g
			}
		}
		if group == nil {
			return nil, notFound("Security group %s not found for project %s.", name, inst.ProjectID)
		}
		ports, err := q.instancePorts(inst)
		if err != nil {
			return nil, err
		}
		if len(ports) == 0 {
			return nil, badRequest("Network requires port_security_enabled and subnet associated in order to apply security groups.")
		}
		changed := false
		for _, p := range ports {
			has := containsString(p.SecurityGroups, group.ID)
			var groups []string
			switch {
			case add && !has:
				if !p.PortSecurityEnabled {
					return nil, badRequest("Network requires port_security_enabled and subnet associated in order to apply security groups.")
				}
				groups = append(append([]string(nil), p.SecurityGroups...), group.ID)
			case !add && has:
				for _, g := range p.SecurityGroups {
					if g != group.ID {
						groups = append(groups, g)
					}
				}
			default:
				continue
			}
			changed = true
			if err := q.call("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindPort, ID: p.ID, Fields: []string{"security_groups"},
				Caller: structs.NetCaller{ProjectID: inst.ProjectID, Admin: q.isAdmin()}, Port: &structs.Port{SecurityGroups: groups}},
				&structs.NetWriteResponse{}); err != nil {
				return nil, err
			}
		}
		if !changed {
			if add {
				return nil, badRequest("Security group %s is already associated with the instance %s", name, inst.ID)
			}
			return nil, badRequest("Security group %s not associated with the instance %s", name, inst.ID)
		}
		return acceptedReply(nil)
	}
}

// parseCIDR is Nova's parse_cidr for a rule's cidr (URL-unquoted, and
// an address with its prefix length), answered as the network service
// stores it: the network address ("10.0.0.5/24" is "10.0.0.0/24").
func parseCIDR(cidr string) (string, error) {
	invalid := badRequest("%s is not a valid IP network.", cidr)
	s, err := url.PathUnescape(cidr)
	if err != nil {
		return "", invalid
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return "", invalid
	}
	return p.Masked().String(), nil
}
