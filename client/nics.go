package client

import (
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// nics reads an instance's ports (Net.List by device, in their order)
// as the NICs its driver wires: the port, its MAC, the Linux bridge of
// its network (brq + the network id's first 11 characters, Neutron's
// linuxbridge name, which client/dataplane wires) and its addresses. A
// failure to read them spawns the instance without NICs rather than not
// at all; the guest gets them back at its next spawn.
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
		nics = append(nics, nicOf(p))
	}
	return nics
}

// nicOf is the NIC of a port.
func nicOf(p *structs.Port) virt.NIC {
	bridge := "brq" + p.NetworkID
	if len(bridge) > 14 {
		bridge = bridge[:14]
	}
	nic := virt.NIC{PortID: p.ID, MAC: p.MACAddress, Bridge: bridge, NetworkID: p.NetworkID}
	for _, ip := range p.FixedIPs {
		nic.IPs = append(nic.IPs, ip.IPAddress)
	}
	return nic
}
