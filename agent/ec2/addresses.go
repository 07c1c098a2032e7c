package ec2

import (
	"encoding/xml"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// Elastic IPs are Neutron's floating IPs (Net.* of kind floatingip) on
// the first external network the project sees: "eipalloc-" and 17 hex
// digits of the floating IP's UUID, and its association "eipassoc-"
// with the same digits (a floating IP has one association at a time).

// fipsOf lists the project's floating IPs.
func (q *request) fipsOf() ([]*structs.FloatingIP, error) {
	objs, err := q.netObjects(structs.NetKindFloatingIP)
	if err != nil {
		return nil, err
	}
	return objs.FloatingIPs, nil
}

// resolveAddress finds a floating IP by allocation id, association id
// or public address, whichever the request names.
func (q *request) resolveAddress() (*structs.FloatingIP, error) {
	alloc, assoc, public := q.params.Get("AllocationId"), q.params.Get("AssociationId"), q.params.Get("PublicIp")
	if alloc == "" && assoc == "" && public == "" {
		return nil, ec2Error(codeMissingParameter, "The request must contain the parameter AllocationId, AssociationId or PublicIp.")
	}
	fips, err := q.fipsOf()
	if err != nil {
		return nil, err
	}
	for _, f := range fips {
		switch {
		case alloc != "" && strings.HasPrefix(ec2ID("eipalloc", f.ID), alloc),
			assoc != "" && f.PortID != "" && strings.HasPrefix(ec2ID("eipassoc", f.ID), assoc),
			public != "" && f.FloatingIPAddress == public:
			return f, nil
		}
	}
	if assoc != "" {
		return nil, ec2Error("InvalidAssociationID.NotFound", "The association ID '%s' does not exist", assoc)
	}
	return nil, ec2Error("InvalidAllocationID.NotFound", "The allocation ID '%s' does not exist", alloc+public)
}

// allocateAddress answers AllocateAddress: a floating IP of the first
// external network (Net.Create).
func allocateAddress(q *request) error {
	nets, err := q.netObjects(structs.NetKindNetwork)
	if err != nil {
		return err
	}
	ext := ""
	for _, n := range nets.Networks {
		if n.External && ext == "" {
			ext = n.ID
		}
	}
	if ext == "" {
		return ec2Error("AddressLimitExceeded", "There is no external network to allocate addresses from.")
	}
	var out structs.NetWriteResponse
	err = q.call("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindFloatingIP, Caller: q.netCaller(),
		Fields: []string{"floating_network_id"}, FloatingIP: &structs.FloatingIP{FloatingNetworkID: ext}}, &out)
	if structs.KindOf(err) == structs.KindQuotaReached {
		return ec2Error("AddressLimitExceeded", "The maximum number of addresses has been reached: %s", structs.Message(err))
	} else if err != nil {
		return err
	}
	if len(out.FloatingIPs) == 0 {
		return ec2Error(codeInternalError, "The servers answered no floating IP.")
	}
	f := out.FloatingIPs[0]
	return q.reply(&allocateAddressResponse{PublicIP: f.FloatingIPAddress, Domain: "vpc", AllocationID: ec2ID("eipalloc", f.ID)})
}

// associateAddress answers AssociateAddress: the floating IP goes to
// the instance's first port (Net.Update of port_id).
func associateAddress(q *request) error {
	f, err := q.resolveAddress()
	if err != nil {
		return err
	}
	id, err := q.required("InstanceId")
	if err != nil {
		return err
	}
	insts, err := q.resolveInstances([]string{id})
	if err != nil {
		return err
	}
	var ports structs.NetListResponse
	if err := q.call("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, Caller: q.netCaller(), DeviceIDs: []string{insts[0].ID}}, &ports); err != nil {
		return err
	}
	if len(ports.Ports) == 0 {
		return ec2Error(codeInvalidParameterValue, "The instance '%s' has no network interface to associate an address with.", id)
	}
	err = q.call("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindFloatingIP, ID: f.ID, Caller: q.netCaller(),
		Fields: []string{"port_id"}, FloatingIP: &structs.FloatingIP{PortID: ports.Ports[0].ID}}, &structs.NetWriteResponse{})
	if err != nil {
		return err
	}
	return q.reply(&associateAddressResponse{Return: true, AssociationID: ec2ID("eipassoc", f.ID)})
}

// disassociateAddress answers DisassociateAddress (port_id cleared).
func disassociateAddress(q *request) error {
	f, err := q.resolveAddress()
	if err != nil {
		return err
	}
	if f.PortID != "" {
		err = q.call("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindFloatingIP, ID: f.ID, Caller: q.netCaller(),
			Fields: []string{"port_id"}, FloatingIP: &structs.FloatingIP{}}, &structs.NetWriteResponse{})
		if err != nil {
			return err
		}
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "DisassociateAddressResponse"}, Return: true})
}

// releaseAddress answers ReleaseAddress (Net.Delete); an associated
// address is InvalidIPAddress.InUse, as in EC2.
func releaseAddress(q *request) error {
	f, err := q.resolveAddress()
	if err != nil {
		return err
	}
	if f.PortID != "" {
		return ec2Error("InvalidIPAddress.InUse", "Address %s is in use.", f.FloatingIPAddress)
	}
	err = q.call("Net.Delete", &structs.NetWriteRequest{Kind: structs.NetKindFloatingIP, ID: f.ID, Caller: q.netCaller()}, &structs.NetWriteResponse{})
	if err != nil {
		return err
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "ReleaseAddressResponse"}, Return: true})
}

// describeAddresses answers DescribeAddresses: the project's floating
// IPs, with the instance each is associated with.
func describeAddresses(q *request) error {
	fips, err := q.fipsOf()
	if err != nil {
		return err
	}
	var ports structs.NetListResponse
	if err := q.call("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, Caller: q.netCaller()}, &ports); err != nil {
		return err
	}
	device := map[string]string{}
	for _, p := range ports.Ports {
		device[p.ID] = p.DeviceID
	}
	allocs, publics := q.list("AllocationId"), q.list("PublicIp")
	resp := &describeAddressesResponse{}
	for _, f := range fips {
		it := addressItem{PublicIP: f.FloatingIPAddress, AllocationID: ec2ID("eipalloc", f.ID), Domain: "vpc",
			PrivateIP: f.FixedIPAddress}
		if f.PortID != "" {
			it.AssociationID = ec2ID("eipassoc", f.ID)
			if d := device[f.PortID]; d != "" {
				it.InstanceID = instanceID(d)
			}
		}
		if len(allocs) > 0 && !contains(allocs, it.AllocationID) || len(publics) > 0 && !contains(publics, it.PublicIP) {
			continue
		}
		resp.Addresses = append(resp.Addresses, it)
	}
	return q.reply(resp)
}

type addressItem struct {
	PublicIP      string `xml:"publicIp"`
	AllocationID  string `xml:"allocationId"`
	Domain        string `xml:"domain"`
	InstanceID    string `xml:"instanceId,omitempty"`
	AssociationID string `xml:"associationId,omitempty"`
	PrivateIP     string `xml:"privateIpAddress,omitempty"`
}

type describeAddressesResponse struct {
	XMLName xml.Name `xml:"DescribeAddressesResponse"`
	meta
	Addresses []addressItem `xml:"addressesSet>item"`
}

type allocateAddressResponse struct {
	XMLName xml.Name `xml:"AllocateAddressResponse"`
	meta
	PublicIP     string `xml:"publicIp"`
	Domain       string `xml:"domain"`
	AllocationID string `xml:"allocationId"`
}

type associateAddressResponse struct {
	XMLName xml.Name `xml:"AssociateAddressResponse"`
	meta
	Return        bool   `xml:"return"`
	AssociationID string `xml:"associationId"`
}
