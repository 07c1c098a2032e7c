package server

import (
	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// routerKind serves routers: the gateway is a port on an external
// network; interfaces are added and removed by Net.RouterInterface.
var routerKind = netKind{
	create: buildRouterCreate, update: buildRouterUpdate, delete: buildRouterDelete,
	visible: ownedBy(func(r *structs.Router) string { return r.ProjectID }),
	fill: func(_ *fsm.StateStore, _ memdb.WatchSet, obj any, out *structs.NetObjects) error {
		out.Routers = append(out.Routers, obj.(*structs.Router))
		return nil
	},
	fields: func(obj any) (string, string, string) {
		r := obj.(*structs.Router)
		return r.ID, r.ProjectID, ""
	},
}

func getRouter(state *fsm.StateStore, c structs.NetCaller, id string) (*structs.Router, error) {
	r, err := state.RouterByID(nil, id)
	if err != nil {
		return nil, err
	}
	if r == nil || !owns(c, r.ProjectID) {
		return nil, structs.NetNotFound(structs.NetKindRouter, id)
	}
	return r, nil
}

// gatewayPort is the port of a router's new gateway.
func gatewayPort(r *structs.Router, gw *structs.RouterGateway) *structs.Port {
	p := &structs.Port{ID: r.GatewayPortID, NetworkID: gw.NetworkID, AdminStateUp: true, MACAddress: newMAC(),
		DeviceOwner: structs.DeviceOwnerRouterGateway, DeviceID: r.ID, BindingVNICType: structs.VNICTypeNormal}
	p.FixedIPs = append(p.FixedIPs, gw.ExternalFixedIPs...)
	return p
}

// checkGateway checks the caller may set a gateway: the network is one
// it sees and external, and only admins choose addresses or SNAT.
func checkGateway(state *fsm.StateStore, c structs.NetCaller, gw *structs.RouterGateway, snatGiven bool, action string) error {
	n, err := getNetwork(state, c, gw.NetworkID)
	if err != nil {
		return err
	}
	if !n.External {
		return structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Bad router request: Network %s is not an external network.", n.ID)
	}
	if !c.Admin && len(gw.ExternalFixedIPs) > 0 {
		return policyError(action + ":external_gateway_info:external_fixed_ips")
	}
	if !c.Admin && snatGiven {
		return policyError(action + ":external_gateway_info:enable_snat")
	}
	return nil
}

func buildRouterCreate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	if a.Router == nil {
		return nil, "", structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Resource body required")
	}
	r := a.Router.Copy()
	var err error
	if r.ProjectID, err = ownerOf(a.Caller, r.ProjectID); err != nil {
		return nil, "", err
	}
	if !a.Caller.Admin && (a.Has("distributed") || a.Has("ha")) {
		return nil, "", policyError("create_router:distributed")
	}
	r.ID = uuid.NewString()
	changes := []*structs.NetChange{{Op: structs.NetOpCreate, Kind: structs.NetKindRouter, Router: r}}
	if gw := r.Gateway; gw != nil {
		if err := checkGateway(state, a.Caller, gw, a.Has("external_gateway_info.enable_snat"), "create_router"); err != nil {
			return nil, "", err
		}
		r.GatewayPortID = uuid.NewString()
		changes = append(changes, &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindPort,
			Port: gatewayPort(r, gw), AutoIPs: len(gw.ExternalFixedIPs) == 0})
	}
	return changes, r.ID, nil
}

func buildRouterUpdate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getRouter(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	in := a.Router
	if in == nil {
		in = &structs.Router{}
	}
	r := old.Copy()
	var newPort *structs.NetChange
	for _, f := range a.Fields {
		switch f {
		case "name":
			r.Name = in.Name
		case "description":
			r.Description = in.Description
		case "admin_state_up":
			r.AdminStateUp = in.AdminStateUp
		case "routes":
			r.Routes = append([]structs.HostRoute(nil), in.Routes...)
		case "distributed", "ha":
			if !a.Caller.Admin {
				return nil, "", policyError("update_router:" + f)
			}
			r.Distributed, r.HA = in.Distributed, in.HA
		case "external_gateway_info":
			gw := in.Gateway
			if gw == nil {
				r.Gateway, r.GatewayPortID = nil, ""
				continue
			}
			if err := checkGateway(state, a.Caller, gw, a.Has("external_gateway_info.enable_snat"), "update_router"); err != nil {
				return nil, "", err
			}
			if old.Gateway != nil && old.Gateway.NetworkID == gw.NetworkID && len(gw.ExternalFixedIPs) == 0 {
				r.Gateway.EnableSNAT = gw.EnableSNAT
				continue
			}
			r.Gateway = &structs.RouterGateway{NetworkID: gw.NetworkID, EnableSNAT: gw.EnableSNAT}
			r.GatewayPortID = uuid.NewString()
			newPort = &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindPort,
				Port: gatewayPort(r, gw), AutoIPs: len(gw.ExternalFixedIPs) == 0}
		default:
			return nil, "", readOnly(f)
		}
	}
	changes := []*structs.NetChange{{Op: structs.NetOpUpdate, Kind: structs.NetKindRouter, Expect: old.ModifyIndex, Router: r}}
	if newPort != nil {
		changes = append(changes, newPort)
	}
	return changes, r.ID, nil
}

func buildRouterDelete(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getRouter(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	return []*structs.NetChange{{Op: structs.NetOpDelete, Kind: structs.NetKindRouter, ID: old.ID}}, old.ID, nil
}

// buildRouterInterface adds or removes a router interface.
func buildRouterInterface(state *fsm.StateStore, a *structs.RouterInterfaceRequest, out *structs.RouterInterfaceResponse) ([]*structs.NetChange, error) {
	r, err := getRouter(state, a.Caller, a.RouterID)
	if err != nil {
		return nil, err
	}
	switch {
	case a.SubnetID == "" && a.PortID == "":
		return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Bad router request: Either subnet_id or port_id must be specified.")
	case a.SubnetID != "" && a.PortID != "" && !a.Remove:
		return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Bad router request: Cannot specify both subnet-id and port-id.")
	}
	out.RouterID, out.ProjectID = r.ID, r.ProjectID
	if a.Remove {
		return removeInterface(state, a, r, out)
	}
	if a.PortID != "" {
		p, err := getPort(state, a.Caller, a.PortID)
		if err != nil {
			return nil, err
		}
		if p.DeviceID != "" {
			return nil, structs.NetErrorf(structs.KindConflict, structs.ErrPortInUse,
				"Unable to complete operation on port %s for network %s. Port already has an attached device %s.", p.ID, p.NetworkID, p.DeviceID)
		}
		if len(p.FixedIPs) == 0 {
			return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Bad router request: Router port must have at least one fixed IP.")
		}
		c := p.Copy()
		c.DeviceID, c.DeviceOwner = r.ID, structs.DeviceOwnerRouterInterface
		out.PortID, out.NetworkID, out.SubnetID = p.ID, p.NetworkID, p.FixedIPs[0].SubnetID
		for _, ip := range p.FixedIPs {
			out.SubnetIDs = append(out.SubnetIDs, ip.SubnetID)
		}
		return []*structs.NetChange{{Op: structs.NetOpUpdate, Kind: structs.NetKindPort, Expect: p.ModifyIndex, Claim: true, Port: c}}, nil
	}
	s, err := getSubnet(state, a.Caller, a.SubnetID)
	if err != nil {
		return nil, err
	}
	if s.GatewayIP == "" {
		return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Bad router request: Subnet for router interface must have a gateway IP.")
	}
	port := &structs.Port{ID: uuid.NewString(), NetworkID: s.NetworkID, ProjectID: r.ProjectID, AdminStateUp: true,
		MACAddress: newMAC(), DeviceOwner: structs.DeviceOwnerRouterInterface, DeviceID: r.ID,
		FixedIPs: []structs.FixedIP{{SubnetID: s.ID, IPAddress: s.GatewayIP}}, BindingVNICType: structs.VNICTypeNormal}
	out.PortID, out.NetworkID, out.SubnetID, out.SubnetIDs = port.ID, s.NetworkID, s.ID, []string{s.ID}
	return []*structs.NetChange{{Op: structs.NetOpCreate, Kind: structs.NetKindPort, Port: port}}, nil
}

func removeInterface(state *fsm.StateStore, a *structs.RouterInterfaceRequest, r *structs.Router, out *structs.RouterInterfaceResponse) ([]*structs.NetChange, error) {
	ports, err := state.PortsByDevice(nil, r.ID)
	if err != nil {
		return nil, err
	}
	for _, p := range ports {
		if p.DeviceOwner != structs.DeviceOwnerRouterInterface || (a.PortID != "" && p.ID != a.PortID) {
			continue
		}
		onSubnet := a.SubnetID == ""
		for _, ip := range p.FixedIPs {
			onSubnet = onSubnet || ip.SubnetID == a.SubnetID
		}
		if !onSubnet {
			continue
		}
		out.PortID, out.NetworkID = p.ID, p.NetworkID
		for _, ip := range p.FixedIPs {
			out.SubnetIDs = append(out.SubnetIDs, ip.SubnetID)
		}
		if len(out.SubnetIDs) > 0 {
			out.SubnetID = out.SubnetIDs[0]
		}
		return []*structs.NetChange{{Op: structs.NetOpDelete, Kind: structs.NetKindPort, ID: p.ID}}, nil
	}
	if a.PortID != "" {
		return nil, structs.NetErrorf(structs.KindNotFound, structs.ErrRouterInterfaceNotFound,
			"Router %s does not have an interface with id %s", r.ID, a.PortID)
	}
	return nil, structs.NetErrorf(structs.KindNotFound, structs.ErrRouterInterfaceNotFoundForSubnet,
		"Router %s has no interface on subnet %s", r.ID, a.SubnetID)
}
