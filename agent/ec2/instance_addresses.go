package ec2

import (
	"github.com/stratus-cloud/stratus/structs"
)

// instanceNet is what DescribeInstances shows of an instance's network:
// its first port's first fixed IP, that subnet and its network (the
// VPC), and the floating IP on the port, if any.
type instanceNet struct {
	privateIP, publicIP, subnetID, vpcID string
}

// networksOf reads the ports and floating IPs of insts (two Net.List
// calls for a whole page).
func (q *request) networksOf(insts []*structs.Instance) (map[string]instanceNet, error) {
	out := map[string]instanceNet{}
	if len(insts) == 0 {
		return out, nil
	}
	ids := make([]string, 0, len(insts))
	for _, inst := range insts {
		ids = append(ids, inst.ID)
	}
	var ports structs.NetListResponse
	if err := q.call("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, Caller: q.netCaller(), DeviceIDs: ids}, &ports); err != nil {
		return nil, err
	}
	fips, err := q.fipsOf()
	if err != nil {
		return nil, err
	}
	public := map[string]string{}
	for _, f := range fips {
		if f.PortID != "" {
			public[f.PortID] = f.FloatingIPAddress
		}
	}
	for _, p := range ports.Ports {
		if _, seen := out[p.DeviceID]; seen || len(p.FixedIPs) == 0 {
			continue
		}
		out[p.DeviceID] = instanceNet{privateIP: p.FixedIPs[0].IPAddress, publicIP: public[p.ID],
			subnetID: ec2ID("subnet", p.FixedIPs[0].SubnetID), vpcID: ec2ID("vpc", p.NetworkID)}
	}
	return out, nil
}

// withNetworks fills the network fields of a page's reservations.
func withNetworks(rs []reservation, nets map[string]instanceNet, insts []*structs.Instance) {
	byEC2 := map[string]instanceNet{}
	for _, inst := range insts {
		byEC2[instanceID(inst.ID)] = nets[inst.ID]
	}
	for i := range rs {
		for j := range rs[i].Instances {
			it := &rs[i].Instances[j]
			n := byEC2[it.InstanceID]
			it.PrivateIPAddress, it.IPAddress, it.SubnetID, it.VpcID = n.privateIP, n.publicIP, n.subnetID, n.vpcID
			if n.privateIP == "" {
				it.SubnetID, it.VpcID = "", ""
			}
		}
	}
}
