package ec2

import (
	"encoding/xml"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// Security groups are Neutron's (Net.* of kind security_group and
// security_group_rule), so a group made here guards the instances the
// Compute API boots and the other way round. EC2's ids are "sg-" and 17
// hex digits of the group's UUID; rules have no EC2 id of their own.

// netCaller is the request's caller as the networking endpoint checks
// it.
func (q *request) netCaller() structs.NetCaller {
	return structs.NetCaller{ProjectID: q.caller.ProjectID, Admin: q.caller.subject.IsAdmin()}
}

// groupsOf lists the project's security groups with their rules.
func (q *request) groupsOf() (*structs.NetObjects, error) {
	var out structs.NetListResponse
	err := q.call("Net.List", &structs.NetListRequest{Kind: structs.NetKindSecurityGroup, Caller: q.netCaller(),
		ProjectID: q.caller.ProjectID}, &out)
	if err != nil {
		return nil, err
	}
	return &out.NetObjects, nil
}

// resolveGroup finds a group by EC2 id (GroupId) or name (GroupName).
func (q *request) resolveGroup(id, name string) (*structs.SecurityGroup, *structs.NetObjects, error) {
	if id == "" && name == "" {
		return nil, nil, ec2Error(codeMissingParameter, "The request must contain the parameter GroupId or GroupName.")
	}
	if id != "" && !validID("sg", id) {
		return nil, nil, ec2Error("InvalidGroupId.Malformed", "Invalid id: \"%s\" (expecting \"sg-...\")", id)
	}
	objs, err := q.groupsOf()
	if err != nil {
		return nil, nil, err
	}
	for _, g := range objs.SecurityGroups {
		if id != "" && strings.HasPrefix(ec2ID("sg", g.ID), id) || id == "" && g.Name == name {
			return g, objs, nil
		}
	}
	return nil, nil, ec2Error("InvalidGroup.NotFound", "The security group '%s' does not exist", id+name)
}

// createSecurityGroup answers CreateSecurityGroup (Net.Create): the new
// group has Neutron's default egress rules, as EC2's has its
// allow-all-egress rule.
func createSecurityGroup(q *request) error {
	name, err := q.required("GroupName")
	if err != nil {
		return err
	}
	desc, err := q.required("GroupDescription")
	if err != nil {
		return err
	}
	// EC2 names a project's groups uniquely; Neutron does not, so the
	// name is checked here (a race of two creates may still make two).
	objs, err := q.groupsOf()
	if err != nil {
		return err
	}
	for _, g := range objs.SecurityGroups {
		if g.Name == name {
			return ec2Error("InvalidGroup.Duplicate", "The security group '%s' already exists", name)
		}
	}
	var out structs.NetWriteResponse
	err = q.call("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroup, Caller: q.netCaller(),
		Fields: []string{"name", "description"}, SecurityGroup: &structs.SecurityGroup{Name: name, Description: desc}}, &out)
	if structs.KindOf(err) == structs.KindConflict {
		return ec2Error("InvalidGroup.Duplicate", "The security group '%s' already exists", name)
	} else if err != nil {
		return err
	}
	if len(out.SecurityGroups) == 0 {
		return ec2Error(codeInternalError, "The servers answered no security group.")
	}
	return q.reply(&createSecurityGroupResponse{Return: true, GroupID: ec2ID("sg", out.SecurityGroups[0].ID)})
}

// deleteSecurityGroup answers DeleteSecurityGroup by GroupId or
// GroupName (Net.Delete; a group in use is DependencyViolation).
func deleteSecurityGroup(q *request) error {
	g, _, err := q.resolveGroup(q.params.Get("GroupId"), q.params.Get("GroupName"))
	if err != nil {
		return err
	}
	err = q.call("Net.Delete", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroup, ID: g.ID, Caller: q.netCaller()}, &structs.NetWriteResponse{})
	if structs.KindOf(err) == structs.KindConflict {
		return ec2Error("DependencyViolation", "resource %s has a dependent object: %s", ec2ID("sg", g.ID), structs.Message(err))
	} else if err != nil {
		return err
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "DeleteSecurityGroupResponse"}, Return: true})
}

// describeSecurityGroups answers DescribeSecurityGroups: the project's
// groups, or those of GroupId.n / GroupName.n, kept by the filters
// group-id, group-name and description, paged with MaxResults (5-1000)
// and NextToken.
func describeSecurityGroups(q *request) error {
	objs, err := q.groupsOf()
	if err != nil {
		return err
	}
	ids, names := q.list("GroupId"), q.list("GroupName")
	resp := &describeSecurityGroupsResponse{}
	found := map[string]bool{}
	for _, g := range objs.SecurityGroups {
		item := viewGroup(g, objs.SecurityGroupRules)
		if len(ids) > 0 && !contains(ids, item.GroupID) || len(names) > 0 && !contains(names, item.GroupName) {
			continue
		}
		if !groupMatches(item, q.filters()) {
			continue
		}
		found[item.GroupID], found[item.GroupName] = true, true
		resp.Groups = append(resp.Groups, item)
	}
	for _, want := range append(ids, names...) {
		if !found[want] {
			return ec2Error("InvalidGroup.NotFound", "The security group '%s' does not exist", want)
		}
	}
	if resp.Groups, resp.NextToken, err = pageOf(q, pager{min: 5, max: 1000, idsParam: "GroupId"}, resp.Groups, func(g groupItem) string { return g.GroupID }); err != nil {
		return err
	}
	return q.reply(resp)
}

func groupMatches(g groupItem, filters []filter) bool {
	for _, f := range filters {
		var v string
		switch f.Name {
		case "group-id":
			v = g.GroupID
		case "group-name":
			v = g.GroupName
		case "description":
			v = g.Description
		default:
			continue
		}
		if !matches(f.Values, v) {
			return false
		}
	}
	return true
}

// viewGroup shows a group and its rules as EC2 does: one IpPermission
// per rule.
func viewGroup(g *structs.SecurityGroup, rules []*structs.SecurityGroupRule) groupItem {
	item := groupItem{OwnerID: g.ProjectID, GroupID: ec2ID("sg", g.ID), GroupName: g.Name, Description: g.Description}
	for _, r := range rules {
		if r.SecurityGroupID != g.ID {
			continue
		}
		p := permissionOf(r)
		if r.Direction == structs.DirectionEgress {
			item.Egress = append(item.Egress, p)
		} else {
			item.Ingress = append(item.Ingress, p)
		}
	}
	return item
}

// permissionOf is a Neutron rule as an EC2 IpPermission.
func permissionOf(r *structs.SecurityGroupRule) ipPermission {
	p := ipPermission{IPProtocol: r.Protocol}
	if p.IPProtocol == "" {
		p.IPProtocol = "-1"
	}
	if r.PortRangeMin != nil {
		p.FromPort = strconv.Itoa(*r.PortRangeMin)
	}
	if r.PortRangeMax != nil {
		p.ToPort = strconv.Itoa(*r.PortRangeMax)
	}
	if r.RemoteGroupID != "" {
		p.Groups = []groupPair{{GroupID: ec2ID("sg", r.RemoteGroupID), UserID: r.ProjectID}}
	}
	prefix := r.RemoteIPPrefix
	if prefix == "" && r.RemoteGroupID == "" {
		prefix = "0.0.0.0/0"
		if r.EtherType == structs.EtherTypeIPv6 {
			prefix = "::/0"
		}
	}
	switch {
	case prefix == "":
	case r.EtherType == structs.EtherTypeIPv6:
		p.IPv6Ranges = []ipRange{{CidrIPv6: prefix}}
	default:
		p.IPRanges = []ipRange{{CidrIP: prefix}}
	}
	return p
}

type ipRange struct {
	CidrIP   string `xml:"cidrIp,omitempty"`
	CidrIPv6 string `xml:"cidrIpv6,omitempty"`
}

type groupPair struct {
	UserID  string `xml:"userId"`
	GroupID string `xml:"groupId"`
}

type ipPermission struct {
	IPProtocol string      `xml:"ipProtocol"`
	FromPort   string      `xml:"fromPort,omitempty"`
	ToPort     string      `xml:"toPort,omitempty"`
	Groups     []groupPair `xml:"groups>item"`
	IPRanges   []ipRange   `xml:"ipRanges>item"`
	IPv6Ranges []ipRange   `xml:"ipv6Ranges>item"`
}

type groupItem struct {
	OwnerID     string         `xml:"ownerId"`
	GroupID     string         `xml:"groupId"`
	GroupName   string         `xml:"groupName"`
	Description string         `xml:"groupDescription"`
	Ingress     []ipPermission `xml:"ipPermissions>item"`
	Egress      []ipPermission `xml:"ipPermissionsEgress>item"`
}

type describeSecurityGroupsResponse struct {
	XMLName xml.Name `xml:"DescribeSecurityGroupsResponse"`
	meta
	Groups    []groupItem `xml:"securityGroupInfo>item"`
	NextToken string      `xml:"nextToken,omitempty"`
}

type createSecurityGroupResponse struct {
	XMLName xml.Name `xml:"CreateSecurityGroupResponse"`
	meta
	Return  bool   `xml:"return"`
	GroupID string `xml:"groupId"`
}
