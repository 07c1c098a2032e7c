package nova

import (
	"net"
	"net/http"
	"time"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// Nova's os-interface: the ports attached to a server, attached and
// detached while it runs.

const interfaceRule = "os_compute_api:os-attach-interfaces"

func (a *API) interfaceRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /servers/{id}/os-interface", Access: reader, Policy: interfaceRule + ":list", Handle: a.interfaceList},
		{Pattern: "POST /servers/{id}/os-interface", Access: member, Policy: interfaceRule + ":create", Handle: a.interfaceAttach},
		{Pattern: "GET /servers/{id}/os-interface/{port}", Access: reader, Policy: interfaceRule + ":show", Handle: a.interfaceShow},
		{Pattern: "DELETE /servers/{id}/os-interface/{port}", Access: member, Policy: interfaceRule + ":delete", Handle: a.interfaceDetach},
	}
}

func (q *request) interfaceView(iface *structs.InstanceInterface) map[string]any {
	v := map[string]any{"fixed_ips": fixedIPsOf(iface.FixedIPs), "mac_addr": iface.MACAddress, "net_id": iface.NetworkID,
		"port_id": iface.PortID, "port_state": iface.Status}
	if q.atLeast(70) {
		v["tag"] = nullString(iface.Tag)
	}
	return v
}

func fixedIPsOf(ips []structs.FixedIP) []any {
	out := make([]any, 0, len(ips))
	for _, ip := range ips {
		out = append(out, map[string]any{"ip_address": ip.IPAddress, "subnet_id": ip.SubnetID})
	}
	return out
}

func (a *API) interfaceList(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	out := []any{}
	if info := q.netInfo(inst.ID); info != nil {
		for _, iface := range info.Interfaces {
			out = append(out, q.interfaceView(iface))
		}
	}
	return okReply(map[string]any{"interfaceAttachments": out})
}

func (a *API) interfaceShow(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if info := q.netInfo(inst.ID); info != nil {
		for _, iface := range info.Interfaces {
			if iface.PortID == q.param("port") {
				return okReply(map[string]any{"interfaceAttachment": q.interfaceView(iface)})
			}
		}
	}
	return nil, notFound("Instance %s is not attached.", q.param("port"))
}

func interfaceSchema(mv int) *schema {
	props := map[string]*schema{
		"net_id":  {types: tString, format: checkUUID},
		"port_id": {types: tString, format: checkUUID},
		"fixed_ips": {types: tArray, maxItems: 1, items: &schema{types: tObject, required: []string{"ip_address"},
			props: map[string]*schema{"ip_address": {types: tString}}}},
	}
	if mv >= 49 {
		props["tag"] = &schema{types: tString, maxLen: 60, pattern: tagPattern}
	}
	return &schema{types: tObject, props: map[string]*schema{"interfaceAttachment": {types: tObject, props: props}}}
}

// checkAttachable refuses an interface change Nova would: a locked
// server for its project, a server not active, paused or stopped, or
// with a task under way.
func (q *request) checkAttachable(inst *structs.Instance, action string) error {
	if inst.Locked && !q.isAdmin() {
		return faultf(http.StatusConflict, "Instance %s is locked", inst.ID)
	}
	switch inst.VMState {
	case structs.VMStateActive, structs.VMStatePaused, structs.VMStateStopped:
	default:
		return faultf(http.StatusConflict, "Cannot '%s' instance %s while it is in vm_state %s", action, inst.ID, inst.VMState)
	}
	if inst.TaskState != "" {
		return faultf(http.StatusConflict, "Cannot '%s' instance %s while it is in task_state %s", action, inst.ID, inst.TaskState)
	}
	return nil
}

// interfaceAttach answers POST /servers/{id}/os-interface: a new port
// on a network (the one available when none is named) or the user's
// port, bound to the server; the host's dataplane plugs it.
func (a *API) interfaceAttach(q *request) (*reply, error) {
	body, err := decodeBody(q, interfaceSchema(q.mv))
	if err != nil {
		return nil, err
	}
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	in := object(body, "interfaceAttachment")
	args := &structs.InterfaceAttachRequest{InstanceID: inst.ID, Caller: q.netCaller()}
	args.NetworkID, _ = stringOf(in, "net_id")
	args.PortID, _ = stringOf(in, "port_id")
	args.Tag, _ = stringOf(in, "tag")
	if args.NetworkID != "" && args.PortID != "" {
		return nil, badRequest("Must not input both network_id and port_id")
	}
	if ips, _ := in["fixed_ips"].([]any); len(ips) > 0 {
		if args.NetworkID == "" {
			return nil, badRequest("Must input network_id when request IP address")
		}
		addr, _ := stringOf(ips[0].(map[string]any), "ip_address")
		if net.ParseIP(addr) == nil {
			return nil, badRequest("Invalid input for field/attribute fixed_ips. Value: %s. Invalid IP address", addr)
		}
		args.FixedIPs = []structs.FixedIP{{IPAddress: addr}}
	}
	if err := q.checkAttachable(inst, "attach_interface"); err != nil {
		return nil, err
	}
	var out structs.NetWriteResponse
	start := time.Now().UnixNano()
	if err := q.call("Net.AttachInterface", args, &out); err != nil {
		switch structs.ErrorType(err) {
		case structs.ErrNetworkNotFound, structs.ErrPortNotFound:
			return nil, notFound("%s", structs.Message(err))
		case structs.ErrIPAddressAlreadyAllocated:
			return nil, faultf(http.StatusConflict, "%s", structs.Message(err))
		case structs.ErrIPAddressGenerationFailure, structs.ErrNetworkAmbiguous, structs.ErrInvalidIPForNetwork:
			return nil, badRequest("%s", structs.Message(err))
		}
		return nil, netFault(err)
	}
	if len(out.Ports) == 0 {
		return nil, faultf(http.StatusInternalServerError, msgUnexpected)
	}
	q.recordGuestAction(inst, "attach_interface", "compute_attach_interface", start, nil)
	p := out.Ports[0]
	iface := &structs.InstanceInterface{PortID: p.ID, NetworkID: p.NetworkID, MACAddress: p.MACAddress, FixedIPs: p.FixedIPs,
		Tag: p.Tag, Status: structs.NetStatusDown}
	if b := out.Bindings[p.ID]; b != nil {
		iface.Status = b.Status
	}
	return okReply(map[string]any{"interfaceAttachment": q.interfaceView(iface)})
}

func (a *API) interfaceDetach(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if err := q.checkAttachable(inst, "detach_interface"); err != nil {
		return nil, err
	}
	start := time.Now().UnixNano()
	err = q.call("Net.DetachInterface", &structs.InterfaceDetachRequest{InstanceID: inst.ID, PortID: q.param("port"), Caller: q.netCaller()},
		&structs.GenericResponse{})
	if structs.KindOf(err) == structs.KindNotFound {
		return nil, notFound("Port %s is not attached", q.param("port"))
	}
	if err != nil {
		return nil, err
	}
	// Nova records the attach and detach as instance actions.
	q.recordGuestAction(inst, "detach_interface", "compute_detach_interface", start, nil)
	return acceptedReply(nil)
}
