package ec2

import (
	"encoding/xml"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// VPCs are Stratus networks and subnets their subnets, as the ec2-api
// project maps them over Neutron: "vpc-" and "subnet-" and 17 hex
// digits of the UUIDs. External networks (floating IP pools) are no
// VPCs.

// netObjects lists the networking objects of kind the caller sees.
func (q *request) netObjects(kind string) (*structs.NetObjects, error) {
	var out structs.NetListResponse
	if err := q.call("Net.List", &structs.NetListRequest{Kind: kind, Caller: q.netCaller()}, &out); err != nil {
		return nil, err
	}
	return &out.NetObjects, nil
}

type vpcItem struct {
	VpcID     string   `xml:"vpcId"`
	State     string   `xml:"state"`
	CidrBlock string   `xml:"cidrBlock"`
	OwnerID   string   `xml:"ownerId"`
	IsDefault bool     `xml:"isDefault"`
	TagSet    []tagRef `xml:"tagSet>item"`
}

type describeVpcsResponse struct {
	XMLName xml.Name `xml:"DescribeVpcsResponse"`
	meta
	Vpcs      []vpcItem `xml:"vpcSet>item"`
	NextToken string    `xml:"nextToken,omitempty"`
}

// describeVpcs answers DescribeVpcs: the networks the project sees
// (its own and shared ones), each with its first IPv4 subnet's CIDR and
// its name as the Name tag; VpcId.n and the filters vpc-id,
// is-default, cidr and the tag filters narrow them; MaxResults (5-1000)
// and NextToken page.
func describeVpcs(q *request) error {
	nets, err := q.netObjects(structs.NetKindNetwork)
	if err != nil {
		return err
	}
	subs, err := q.netObjects(structs.NetKindSubnet)
	if err != nil {
		return err
	}
	want := q.list("VpcId")
	resp := &describeVpcsResponse{}
	for _, n := range nets.Networks {
		if n.External {
			continue
		}
		item := vpcItem{VpcID: ec2ID("vpc", n.ID), State: "available", OwnerID: n.ProjectID, IsDefault: n.IsDefault}
		for _, s := range subs.Subnets {
			if s.NetworkID == n.ID && s.IPVersion == 4 && item.CidrBlock == "" {
				item.CidrBlock = s.CIDR
			}
		}
		if n.Name != "" {
			item.TagSet = []tagRef{{Key: "Name", Value: n.Name}}
		}
		if len(want) > 0 && !contains(want, item.VpcID) || !vpcMatches(item, q.filters()) {
			continue
		}
		resp.Vpcs = append(resp.Vpcs, item)
	}
	if resp.Vpcs, resp.NextToken, err = pageOf(q, pager{min: 5, max: 1000, idsParam: "VpcId"}, resp.Vpcs, func(v vpcItem) string { return v.VpcID }); err != nil {
		return err
	}
	return q.reply(resp)
}

func vpcMatches(v vpcItem, filters []filter) bool {
	for _, f := range filters {
		switch {
		case f.Name == "vpc-id" && !matches(f.Values, v.VpcID),
			f.Name == "is-default" && !matches(f.Values, boolString(v.IsDefault)),
			f.Name == "cidr" && !matches(f.Values, v.CidrBlock),
			isTagFilter(f.Name) && !tagMatches(v.TagSet, f):
			return false
		}
	}
	return true
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

type subnetItem struct {
	SubnetID         string   `xml:"subnetId"`
	State            string   `xml:"state"`
	VpcID            string   `xml:"vpcId"`
	CidrBlock        string   `xml:"cidrBlock"`
	AvailableIPs     int      `xml:"availableIpAddressCount"`
	AvailabilityZone string   `xml:"availabilityZone"`
	DefaultForAz     bool     `xml:"defaultForAz"`
	MapPublicIP      bool     `xml:"mapPublicIpOnLaunch"`
	OwnerID          string   `xml:"ownerId"`
	TagSet           []tagRef `xml:"tagSet>item"`
}

type describeSubnetsResponse struct {
	XMLName xml.Name `xml:"DescribeSubnetsResponse"`
	meta
	Subnets   []subnetItem `xml:"subnetSet>item"`
	NextToken string       `xml:"nextToken,omitempty"`
}

// describeSubnets answers DescribeSubnets: the IPv4 subnets of the
// networks DescribeVpcs shows; SubnetId.n and the filters subnet-id,
// vpc-id, cidr-block, availability-zone and the tag filters narrow
// them; MaxResults (5-1000) and NextToken page.
func describeSubnets(q *request) error {
	nets, err := q.netObjects(structs.NetKindNetwork)
	if err != nil {
		return err
	}
	subs, err := q.netObjects(structs.NetKindSubnet)
	if err != nil {
		return err
	}
	external := map[string]bool{}
	for _, n := range nets.Networks {
		external[n.ID] = n.External
	}
	want := q.list("SubnetId")
	resp := &describeSubnetsResponse{}
	for _, s := range subs.Subnets {
		if external[s.NetworkID] || s.IPVersion != 4 {
			continue
		}
		item := subnetItem{SubnetID: ec2ID("subnet", s.ID), State: "available", VpcID: ec2ID("vpc", s.NetworkID),
			CidrBlock: s.CIDR, AvailabilityZone: q.api.zone, OwnerID: s.ProjectID}
		if s.Name != "" {
			item.TagSet = []tagRef{{Key: "Name", Value: s.Name}}
		}
		if len(want) > 0 && !contains(want, item.SubnetID) || !subnetMatches(item, q.filters()) {
			continue
		}
		resp.Subnets = append(resp.Subnets, item)
	}
	if resp.Subnets, resp.NextToken, err = pageOf(q, pager{min: 5, max: 1000, idsParam: "SubnetId"}, resp.Subnets, func(s subnetItem) string { return s.SubnetID }); err != nil {
		return err
	}
	return q.reply(resp)
}

func subnetMatches(s subnetItem, filters []filter) bool {
	for _, f := range filters {
		switch {
		case f.Name == "subnet-id" && !matches(f.Values, s.SubnetID),
			f.Name == "vpc-id" && !matches(f.Values, s.VpcID),
			f.Name == "cidr-block" && !matches(f.Values, s.CidrBlock),
			f.Name == "availability-zone" && !matches(f.Values, s.AvailabilityZone),
			isTagFilter(f.Name) && !tagMatches(s.TagSet, f):
			return false
		}
	}
	return true
}

// resolveSubnet maps a subnet- id to its subnet, for RunInstances.
func (q *request) resolveSubnet(id string) (*structs.Subnet, error) {
	if !validID("subnet", id) {
		return nil, ec2Error("InvalidSubnetID.Malformed", "Invalid id: \"%s\"", id)
	}
	subs, err := q.netObjects(structs.NetKindSubnet)
	if err != nil {
		return nil, err
	}
	for _, s := range subs.Subnets {
		if strings.HasPrefix(ec2ID("subnet", s.ID), id) {
			return s, nil
		}
	}
	return nil, ec2Error("InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", id)
}

// isTagFilter reports whether a filter is on tags (tag:<key>, tag-key,
// tag-value).
func isTagFilter(name string) bool {
	return strings.HasPrefix(name, "tag:") || name == "tag-key" || name == "tag-value"
}
