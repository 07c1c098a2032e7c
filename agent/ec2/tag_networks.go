package ec2

import (
	"github.com/stratus-cloud/stratus/structs"
)

// A VPC's or subnet's one tag is Name, the Neutron network's or
// subnet's name (DescribeVpcs and DescribeSubnets show it so): Neutron
// records in Stratus keep no other tags. Only the project's own
// networks are tagged; shared and external ones are another project's.

func (q *request) taggableNetworks() ([]*taggable, error) {
	nets, err := q.netObjects(structs.NetKindNetwork)
	if err != nil {
		return nil, err
	}
	var out []*taggable
	for _, n := range nets.Networks {
		if n.External || n.ProjectID != q.caller.ProjectID {
			continue
		}
		id := n.ID
		out = append(out, nameTaggable("vpc", id, n.Name, func(name string) *structs.NetWriteRequest {
			return &structs.NetWriteRequest{Kind: structs.NetKindNetwork, ID: id, Fields: []string{"name"}, Network: &structs.Network{Name: name}}
		}))
	}
	return out, nil
}

func (q *request) taggableSubnets() ([]*taggable, error) {
	subs, err := q.netObjects(structs.NetKindSubnet)
	if err != nil {
		return nil, err
	}
	var out []*taggable
	for _, s := range subs.Subnets {
		if s.ProjectID != q.caller.ProjectID {
			continue
		}
		id := s.ID
		out = append(out, nameTaggable("subnet", id, s.Name, func(name string) *structs.NetWriteRequest {
			return &structs.NetWriteRequest{Kind: structs.NetKindSubnet, ID: id, Fields: []string{"name"}, Subnet: &structs.Subnet{Name: name}}
		}))
	}
	return out, nil
}

// nameTaggable is a networking record whose Name tag is its name, set
// with the Net.Update rename builds.
func nameTaggable(kind, id, name string, rename func(string) *structs.NetWriteRequest) *taggable {
	t := &taggable{prefix: kind, uuid: id, kind: kind, nameOnly: true}
	if name != "" {
		t.tags = []tagRef{{Key: "Name", Value: name}}
	}
	update := func(q *request, name string) error {
		req := rename(name)
		req.Caller = q.netCaller()
		return q.call("Net.Update", req, &structs.NetWriteResponse{})
	}
	t.set = func(q *request, tags map[string]string) error { return update(q, tags["Name"]) }
	t.del = func(q *request, _ []string) error { return update(q, "") }
	return t
}
