package ec2

import (
	"encoding/xml"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// Authorize/RevokeSecurityGroupIngress/Egress: each IpPermissions.n
// (or the old top-level IpProtocol/FromPort/ToPort/CidrIp) becomes one
// Neutron rule per range or group pair; revoking deletes the rules that
// match exactly.

func authorizeIngress(q *request) error {
	return q.changeRules("AuthorizeSecurityGroupIngressResponse", structs.DirectionIngress, false)
}
func authorizeEgress(q *request) error {
	return q.changeRules("AuthorizeSecurityGroupEgressResponse", structs.DirectionEgress, false)
}
func revokeIngress(q *request) error {
	return q.changeRules("RevokeSecurityGroupIngressResponse", structs.DirectionIngress, true)
}
func revokeEgress(q *request) error {
	return q.changeRules("RevokeSecurityGroupEgressResponse", structs.DirectionEgress, true)
}

// changeRules adds (or with revoke removes) the request's rules.
func (q *request) changeRules(name, direction string, revoke bool) error {
	g, objs, err := q.resolveGroup(q.params.Get("GroupId"), q.params.Get("GroupName"))
	if err != nil {
		return err
	}
	rules, err := q.rulesParam(g, direction)
	if err != nil {
		return err
	}
	if len(rules) == 0 {
		return ec2Error(codeMissingParameter, "The request must contain the parameter IpPermissions.")
	}
	for _, r := range rules {
		existing := sameRule(objs.SecurityGroupRules, r)
		switch {
		case revoke && existing == nil:
			return ec2Error("InvalidPermission.NotFound", "The specified rule does not exist in this security group.")
		case revoke:
			err = q.call("Net.Delete", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroupRule, ID: existing.ID, Caller: q.netCaller()}, &structs.NetWriteResponse{})
		case existing != nil:
			return ec2Error("InvalidPermission.Duplicate", "the specified rule \"peer: %s, %s\" already exists", r.RemoteIPPrefix+r.RemoteGroupID, strings.ToUpper(r.Protocol))
		default:
			err = q.call("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroupRule, Caller: q.netCaller(), Rule: r}, &structs.NetWriteResponse{})
		}
		if err != nil {
			return err
		}
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: name}, Return: true})
}

// rulesParam reads the permissions as Neutron rules of group g.
func (q *request) rulesParam(g *structs.SecurityGroup, direction string) ([]*structs.SecurityGroupRule, error) {
	var prefixes []string
	if q.params.Get("IpProtocol") != "" {
		prefixes = append(prefixes, "")
	}
	for _, i := range q.indices("IpPermissions") {
		prefixes = append(prefixes, "IpPermissions."+strconv.Itoa(i)+".")
	}
	var out []*structs.SecurityGroupRule
	for _, p := range prefixes {
		base := &structs.SecurityGroupRule{SecurityGroupID: g.ID, Direction: direction, Protocol: q.params.Get(p + "IpProtocol")}
		if base.Protocol == "-1" || base.Protocol == "all" {
			base.Protocol = ""
		}
		var err error
		if base.PortRangeMin, err = q.portParam(p + "FromPort"); err != nil {
			return nil, err
		}
		if base.PortRangeMax, err = q.portParam(p + "ToPort"); err != nil {
			return nil, err
		}
		if base.Protocol == "" {
			base.PortRangeMin, base.PortRangeMax = nil, nil
		}
		add := func(mod func(r *structs.SecurityGroupRule)) {
			r := *base
			mod(&r)
			out = append(out, &r)
		}
		var cidrs []string
		for _, i := range q.indices(p + "IpRanges") {
			cidrs = append(cidrs, q.params.Get(p+"IpRanges."+strconv.Itoa(i)+".CidrIp"))
		}
		if c := q.params.Get(p + "CidrIp"); c != "" {
			cidrs = append(cidrs, c)
		}
		for _, c := range cidrs {
			if c != "" {
				add(func(r *structs.SecurityGroupRule) { r.EtherType, r.RemoteIPPrefix = structs.EtherTypeIPv4, c })
			}
		}
		for _, i := range q.indices(p + "Ipv6Ranges") {
			c := q.params.Get(p + "Ipv6Ranges." + strconv.Itoa(i) + ".CidrIpv6")
			add(func(r *structs.SecurityGroupRule) { r.EtherType, r.RemoteIPPrefix = structs.EtherTypeIPv6, c })
		}
		for _, i := range q.indices(p + "Groups") {
			id := q.params.Get(p + "Groups." + strconv.Itoa(i) + ".GroupId")
			remote, _, err := q.resolveGroup(id, q.params.Get(p+"Groups."+strconv.Itoa(i)+".GroupName"))
			if err != nil {
				return nil, err
			}
			add(func(r *structs.SecurityGroupRule) { r.EtherType, r.RemoteGroupID = structs.EtherTypeIPv4, remote.ID })
		}
	}
	for _, r := range out {
		if err := r.Normalize(); err != nil {
			return nil, ec2Error(codeInvalidParameterValue, "%s", structs.Message(err))
		}
	}
	return out, nil
}

// portParam reads a port (or ICMP type/code); -1 is none.
func (q *request) portParam(name string) (*int, error) {
	v := q.params.Get(name)
	if v == "" || v == "-1" {
		return nil, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil, ec2Error(codeInvalidParameterValue, "Invalid value '%s' for %s.", v, name)
	}
	return &n, nil
}

// sameRule finds the group's rule equal to r in what EC2 tells apart.
func sameRule(rules []*structs.SecurityGroupRule, r *structs.SecurityGroupRule) *structs.SecurityGroupRule {
	eq := func(a, b *int) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	for _, x := range rules {
		if x.SecurityGroupID == r.SecurityGroupID && x.Direction == r.Direction && x.EtherType == r.EtherType &&
			x.Protocol == r.Protocol && eq(x.PortRangeMin, r.PortRangeMin) && eq(x.PortRangeMax, r.PortRangeMax) &&
			x.RemoteGroupID == r.RemoteGroupID && normPrefix(x) == normPrefix(r) {
			return x
		}
	}
	return nil
}

// normPrefix is a rule's remote prefix with "any" spelled one way.
func normPrefix(r *structs.SecurityGroupRule) string {
	switch r.RemoteIPPrefix {
	case "0.0.0.0/0", "::/0":
		if r.RemoteGroupID == "" {
			return ""
		}
	}
	return r.RemoteIPPrefix
}
