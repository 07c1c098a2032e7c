package nova

import (
	"encoding/json"
	"net"

	"github.com/stratus-cloud/stratus/structs"
)

// Nova's multinic actions, addFixedIp and removeFixedIp, deprecated
// with the other nova-network proxies and gone (404) from 2.44. With
// Neutron, Nova adds the address to a port of the network; Stratus does
// what os-interface does: addFixedIp attaches a new port on the
// network, with an address from its subnets, and removeFixedIp detaches
// the port that holds the address (a port Stratus created is deleted,
// one the user handed the server is unbound).

const multinicRule = "os_compute_api:os-multinic:"

var (
	addFixedIPSchema = &schema{types: tObject, required: []string{"networkId"}, props: map[string]*schema{
		"networkId": {types: tString | tInteger}}}
	removeFixedIPSchema = &schema{types: tObject, required: []string{"address"}, props: map[string]*schema{
		"address": {types: tString, format: checkIPAddress}}}
)

// multinicActions are addFixedIp and removeFixedIp, by name.
func multinicActions() map[string]*serverActionSpec {
	return map[string]*serverActionSpec{
		"addFixedIp": {rule: multinicRule + "add",
			schema: func(int) *schema { return addFixedIPSchema }, do: untilVersion(43, actAddFixedIP)},
		"removeFixedIp": {rule: multinicRule + "remove",
			schema: func(int) *schema { return removeFixedIPSchema }, do: untilVersion(43, actRemoveFixedIP)},
	}
}

// actAddFixedIP attaches a port on the network to the server (202).
func actAddFixedIP(q *request, inst *structs.Instance, arg any) (*reply, error) {
	in := arg.(map[string]any)
	network := ""
	switch v := in["networkId"].(type) {
	case string:
		network = v
	case json.Number:
		network = v.String()
	}
	if err := q.checkAttachable(inst, "addFixedIp"); err != nil {
		return nil, err
	}
	args := &structs.InterfaceAttachRequest{InstanceID: inst.ID, NetworkID: network, Caller: q.netCaller()}
	var out structs.NetWriteResponse
	if err := q.call("Net.AttachInterface", args, &out); err != nil {
		switch structs.ErrorType(err) {
		case structs.ErrNetworkNotFound:
			return nil, notFound("Network %s could not be found.", network)
		case structs.ErrIPAddressGenerationFailure:
			return nil, badRequest("No fixed IP addresses available for network: %s", network)
		}
		return nil, netFault(err)
	}
	return acceptedReply(nil)
}

// actRemoveFixedIP detaches the server's port that holds the address
// (202); 400 when no port of the server has it, as Nova's
// FixedIpNotFoundForInstance.
func actRemoveFixedIP(q *request, inst *structs.Instance, arg any) (*reply, error) {
	addr, _ := stringOf(arg.(map[string]any), "address")
	if err := q.checkAttachable(inst, "removeFixedIp"); err != nil {
		return nil, err
	}
	port := ""
	if info := q.netInfo(inst.ID); info != nil {
		want := net.ParseIP(addr)
		for _, iface := range info.Interfaces {
			for _, ip := range iface.FixedIPs {
				if net.ParseIP(ip.IPAddress).Equal(want) {
					port = iface.PortID
				}
			}
		}
	}
	if port == "" {
		return nil, badRequest("Instance %s does not have fixed IP '%s'.", inst.ID, addr)
	}
	err := q.call("Net.DetachInterface", &structs.InterfaceDetachRequest{InstanceID: inst.ID, PortID: port, Caller: q.netCaller()},
		&structs.GenericResponse{})
	if structs.KindOf(err) == structs.KindNotFound {
		return nil, badRequest("Instance %s does not have fixed IP '%s'.", inst.ID, addr)
	}
	if err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}
