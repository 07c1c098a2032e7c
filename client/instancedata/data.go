package instancedata

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

// CallFunc reaches the servers: an agent's RPC method, or a hypervisor
// agent's call that gives up at shutdown.
type CallFunc func(method string, args, reply any) error

// InstanceData is everything the metadata of one instance is made of, as
// read from state at one moment.
type InstanceData struct {
	Instance *structs.Instance
	// KeyPair is the instance's key pair, nil when it has none or the
	// key pair was deleted since.
	KeyPair *structs.KeyPair
	// AZ is the instance's availability zone: its own, else its host's.
	AZ string
	// Ports are the instance's compute ports, eth0 first.
	Ports []*structs.Port
	// Networks and Subnets are those of the ports, by id.
	Networks map[string]*structs.Network
	Subnets  map[string]*structs.Subnet
	// SecurityGroups are the names of the ports' security groups.
	SecurityGroups []string
	// FloatingIPs maps a fixed IP to the floating IP associated with it.
	FloatingIPs map[string]string
}

// defaultAZ is Nova's default_availability_zone.
const defaultAZ = "nova"

// Fetch reads an instance's metadata from the servers. A missing
// instance is an error of kind structs.KindNotFound.
func Fetch(call CallFunc, instanceID string) (*InstanceData, error) {
	var got structs.SingleInstanceResponse
	if err := call("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: instanceID}, &got); err != nil {
		return nil, fmt.Errorf("read instance %s: %w", instanceID, err)
	}
	if got.Instance == nil {
		return nil, structs.Errorf(structs.KindNotFound, "instance %q not found", instanceID)
	}
	return FetchFor(call, got.Instance)
}

// FetchFor reads the rest of an instance's metadata (key pair, zone,
// ports and their networks) for an instance already read.
func FetchFor(call CallFunc, inst *structs.Instance) (*InstanceData, error) {
	d := &InstanceData{Instance: inst, AZ: inst.AZ, Networks: map[string]*structs.Network{},
		Subnets: map[string]*structs.Subnet{}, FloatingIPs: map[string]string{}}
	if inst.KeyName != "" {
		var kp structs.SingleKeyPairResponse
		err := call("KeyPair.Get", &structs.KeyPairSpecificRequest{UserID: inst.UserID, Name: inst.KeyName}, &kp)
		if err != nil && structs.KindOf(err) != structs.KindNotFound {
			return nil, fmt.Errorf("read key pair %s: %w", inst.KeyName, err)
		}
		d.KeyPair = kp.KeyPair
	}
	if d.AZ == "" && inst.HostID != "" {
		var h structs.SingleHostResponse
		if err := call("Host.Get", &structs.HostSpecificRequest{HostID: inst.HostID}, &h); err == nil && h.Host != nil {
			d.AZ = h.Host.AZ
		}
	}
	if d.AZ == "" {
		d.AZ = defaultAZ
	}
	if err := d.fetchNetworking(call); err != nil {
		return nil, err
	}
	return d, nil
}

// fetchNetworking reads the instance's ports, their networks, subnets,
// security groups and floating IPs.
func (d *InstanceData) fetchNetworking(call CallFunc) error {
	admin := structs.NetCaller{Admin: true}
	var ports structs.NetListResponse
	if err := call("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, DeviceIDs: []string{d.Instance.ID}, Caller: admin}, &ports); err != nil {
		return fmt.Errorf("read ports of instance %s: %w", d.Instance.ID, err)
	}
	var netIDs, subnetIDs, groupIDs []string
	for _, p := range ports.Ports {
		if !p.IsCompute() {
			continue
		}
		d.Ports = append(d.Ports, p)
		netIDs = appendNew(netIDs, p.NetworkID)
		for _, ip := range p.FixedIPs {
			subnetIDs = appendNew(subnetIDs, ip.SubnetID)
		}
		for _, g := range p.SecurityGroups {
			groupIDs = appendNew(groupIDs, g)
		}
	}
	slices.SortStableFunc(d.Ports, func(a, b *structs.Port) int { return cmp.Compare(a.DeviceSeq, b.DeviceSeq) })
	if len(d.Ports) == 0 {
		return nil
	}
	var objs structs.NetListResponse
	for _, q := range []struct {
		kind string
		ids  []string
	}{{structs.NetKindNetwork, netIDs}, {structs.NetKindSubnet, subnetIDs}, {structs.NetKindSecurityGroup, groupIDs}} {
		if len(q.ids) == 0 {
			continue
		}
		var out structs.NetListResponse
		if err := call("Net.List", &structs.NetListRequest{Kind: q.kind, IDs: q.ids, Caller: admin}, &out); err != nil {
			return fmt.Errorf("read %ss of instance %s: %w", q.kind, d.Instance.ID, err)
		}
		objs.Networks = append(objs.Networks, out.Networks...)
		objs.Subnets = append(objs.Subnets, out.Subnets...)
		objs.SecurityGroups = append(objs.SecurityGroups, out.SecurityGroups...)
	}
	for _, n := range objs.Networks {
		d.Networks[n.ID] = n
	}
	for _, s := range objs.Subnets {
		d.Subnets[s.ID] = s
	}
	for _, id := range groupIDs {
		for _, g := range objs.SecurityGroups {
			if g.ID == id {
				d.SecurityGroups = appendNew(d.SecurityGroups, g.Name)
			}
		}
	}
	var fips structs.NetListResponse
	if err := call("Net.List", &structs.NetListRequest{Kind: structs.NetKindFloatingIP, ProjectID: d.Instance.ProjectID, Caller: admin}, &fips); err != nil {
		return fmt.Errorf("read floating IPs of instance %s: %w", d.Instance.ID, err)
	}
	for _, f := range fips.FloatingIPs {
		for _, p := range d.Ports {
			if f.PortID == p.ID && f.FixedIPAddress != "" {
				d.FloatingIPs[f.FixedIPAddress] = f.FloatingIPAddress
			}
		}
	}
	return nil
}

// appendNew appends s unless it is empty or already there.
func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// FixedIPs lists the instance's fixed addresses, eth0's first.
func (d *InstanceData) FixedIPs() []string {
	var out []string
	for _, p := range d.Ports {
		for _, ip := range p.FixedIPs {
			out = append(out, ip.IPAddress)
		}
	}
	return out
}
