package client

import (
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// nics reads an instance's ports (Net.List by device, in their order)
// as the NICs its driver wires: the port, its MAC, the Linux bridge of
// its network (brq + the network id's first 11 characters, Neutron's
// linuxbridge name) and its addresses. Until the hypervisor dataplane
// lands nothing depends on them, so a failure to read them spawns the
// instance without NICs rather than not at all.
func (r *runner) nics(instanceID string) []virt.NIC {
	var out structs.NetListResponse
	err := r.c.call("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, DeviceIDs: []string{instanceID},
		Caller: structs.NetCaller{Admin: true}}, &out)
	if err != nil {
		r.logger.Warn("cannot read the instance's ports; spawning without NICs", "error", err)
		return nil
	}
	var nics []virt.NIC
	for _, p := range out.Ports {
		if !p.IsCompute() {
			continue
		}
		bridge := "brq" + p.NetworkID
		if len(bridge) > 14 {
			bridge = bridge[:14]
		}
		nic := virt.NIC{PortID: p.ID, MAC: p.MACAddress, Bridge: bridge, NetworkID: p.NetworkID}
		for _, ip := range p.FixedIPs {
			nic.IPs = append(nic.IPs, ip.IPAddress)
		}
		nics = append(nics, nic)
	}
	return nics
}
