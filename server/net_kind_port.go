package server

import (
	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// portKind serves ports: made on a network the caller owns or that is
// shared, with the project's default security group unless others are
// named; shown with their binding.
var portKind = netKind{
	create: buildPortCreate, update: buildPortUpdate, delete: buildPortDelete,
	visible: func(state *fsm.StateStore, c structs.NetCaller, obj any) bool {
		return seesPort(state, c, obj.(*structs.Port))
	},
	fill: fillPort,
	fields: func(obj any) (string, string, string) {
		p := obj.(*structs.Port)
		return p.ID, p.ProjectID, p.NetworkID
	},
	list: func(state *fsm.StateStore, ws memdb.WatchSet, a *structs.NetListRequest) ([]any, error) {
		ports, err := listPorts(state, ws, a)
		return anys(ports), err
	},
}

func getPort(state *fsm.StateStore, c structs.NetCaller, id string) (*structs.Port, error) {
	p, err := state.PortByID(nil, id)
	if err != nil {
		return nil, err
	}
	if p == nil || !seesPort(state, c, p) {
		return nil, structs.NetNotFound(structs.NetKindPort, id)
	}
	return p, nil
}

// portGroups resolves the security groups a new port gets: those asked
// for (ids the port's project owns), else the project's default group,
// created on this first use.
func portGroups(state *fsm.StateStore, projectID string, asked []string, given, portSecurity bool) ([]*structs.NetChange, []string, error) {
	if !portSecurity {
		if given && len(asked) > 0 {
			return nil, nil, structs.NetErrorf(structs.KindConflict, structs.ErrConflict,
				"Port security must be enabled and port must have an IP address in order to use security groups.")
		}
		return nil, nil, nil
	}
	if given {
		for _, id := range asked {
			g, err := state.SecurityGroupByID(nil, id)
			if err != nil {
				return nil, nil, err
			}
			if g == nil || (projectID != "" && g.ProjectID != projectID) {
				return nil, nil, structs.NetNotFound(structs.NetKindSecurityGroup, id)
			}
		}
		return nil, append([]string(nil), asked...), nil
	}
	if projectID == "" {
		return nil, nil, nil
	}
	changes, id, err := defaultGroupChanges(state, projectID)
	return changes, []string{id}, err
}

func buildPortCreate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	if a.Port == nil {
		return nil, "", structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Resource body required")
	}
	p := a.Port.Copy()
	n, err := getNetwork(state, a.Caller, p.NetworkID)
	if err != nil {
		return nil, "", err
	}
	netOwner := owns(a.Caller, n.ProjectID)
	if !netOwner && !n.Shared {
		return nil, "", structs.NetErrorf(structs.KindPermission, structs.ErrPolicyNotAuthorized,
			"Tenant %s not allowed to create port on this network", a.Caller.ProjectID)
	}
	if p.ProjectID, err = ownerOf(a.Caller, p.ProjectID); err != nil {
		return nil, "", err
	}
	if !a.Caller.Admin {
		for _, f := range []string{"binding:host_id", "binding:profile"} {
			if a.Has(f) {
				return nil, "", policyError("create_port:" + f)
			}
		}
	}
	if !netOwner {
		if a.Has("mac_address") {
			return nil, "", policyError("create_port:mac_address")
		}
		for _, ip := range p.FixedIPs {
			if ip.IPAddress != "" {
				return nil, "", policyError("create_port:fixed_ips:ip_address")
			}
		}
		if len(p.DeviceOwner) > 8 && p.DeviceOwner[:8] == "network:" {
			return nil, "", policyError("create_port:device_owner")
		}
	}
	if !a.Has("port_security_enabled") {
		p.PortSecurityEnabled = n.PortSecurityEnabled
	}
	changes, groups, err := portGroups(state, p.ProjectID, p.SecurityGroups, a.Has("security_groups"), p.PortSecurityEnabled)
	if err != nil {
		return nil, "", err
	}
	p.SecurityGroups = groups
	if !a.Has("mac_address") || p.MACAddress == "" {
		p.MACAddress = freeMAC(state, p.NetworkID)
	}
	if p.BindingVNICType == "" {
		p.BindingVNICType = structs.VNICTypeNormal
	}
	p.ID, p.PreserveOnDelete, p.DeviceSeq = uuid.NewString(), false, 0
	if err := p.Validate(); err != nil {
		return nil, "", err
	}
	changes = append(changes, &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindPort, Port: p, AutoIPs: !a.Has("fixed_ips")})
	return changes, p.ID, nil
}

func buildPortUpdate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getPort(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	n, err := state.NetworkByID(nil, old.NetworkID)
	if err != nil {
		return nil, "", err
	}
	netOwner := n != nil && owns(a.Caller, n.ProjectID)
	if !owns(a.Caller, old.ProjectID) && !netOwner {
		return nil, "", policyError("update_port")
	}
	in := a.Port
	if in == nil {
		in = &structs.Port{}
	}
	p := old.Copy()
	for _, f := range a.Fields {
		switch f {
		case "name":
			p.Name = in.Name
		case "description":
			p.Description = in.Description
		case "admin_state_up":
			p.AdminStateUp = in.AdminStateUp
		case "fixed_ips":
			if !netOwner {
				for _, ip := range in.FixedIPs {
					if ip.IPAddress != "" && !old.HasIP(ip.IPAddress) {
						return nil, "", policyError("update_port:fixed_ips:ip_address")
					}
				}
			}
			p.FixedIPs = append([]structs.FixedIP(nil), in.FixedIPs...)
		case "security_groups":
			if !p.PortSecurityEnabled && len(in.SecurityGroups) > 0 {
				return nil, "", structs.NetErrorf(structs.KindConflict, structs.ErrConflict,
					"Port security must be enabled and port must have an IP address in order to use security groups.")
			}
			if _, groups, err := portGroups(state, p.ProjectID, in.SecurityGroups, true, true); err != nil {
				return nil, "", err
			} else {
				p.SecurityGroups = groups
			}
		case "allowed_address_pairs":
			p.AllowedAddressPairs = append([]structs.AddressPair(nil), in.AllowedAddressPairs...)
		case "device_id":
			p.DeviceID = in.DeviceID
		case "device_owner":
			if !netOwner && len(in.DeviceOwner) > 8 && in.DeviceOwner[:8] == "network:" {
				return nil, "", policyError("update_port:device_owner")
			}
			p.DeviceOwner = in.DeviceOwner
		case "port_security_enabled":
			p.PortSecurityEnabled = in.PortSecurityEnabled
			if !p.PortSecurityEnabled {
				if a.Has("security_groups") && len(in.SecurityGroups) > 0 || !a.Has("security_groups") && len(p.SecurityGroups) > 0 {
					return nil, "", structs.NetErrorf(structs.KindConflict, structs.ErrConflict,
						"Port has security group associated. Cannot disable port security or ip address until security group is removed")
				}
			}
		case "binding:host_id", "binding:profile", "binding:vnic_type", "mac_address":
			if err := updatePortBinding(p, old, in, f, a.Caller.Admin); err != nil {
				return nil, "", err
			}
		default:
			return nil, "", readOnly(f)
		}
	}
	return []*structs.NetChange{{Op: structs.NetOpUpdate, Kind: structs.NetKindPort, Expect: old.ModifyIndex, Port: p}}, p.ID, nil
}

// updatePortBinding sets one of the attributes only admins may change
// (except the VNIC type): the binding and the MAC address.
func updatePortBinding(p, old, in *structs.Port, field string, admin bool) error {
	if !admin && field != "binding:vnic_type" {
		return policyError("update_port:" + field)
	}
	switch field {
	case "binding:host_id":
		p.BindingHostID = in.BindingHostID
	case "binding:profile":
		p.BindingProfile = in.BindingProfile
	case "binding:vnic_type":
		p.BindingVNICType = in.BindingVNICType
	default:
		if old.DeviceID != "" && in.MACAddress != old.MACAddress {
			return structs.NetErrorf(structs.KindConflict, structs.ErrPortInUse,
				"Unable to complete operation on port %s, port is already bound, port type: %s, old_mac %s, new_mac %s.",
				old.ID, structs.VIFTypeBridge, old.MACAddress, in.MACAddress)
		}
		p.MACAddress = in.MACAddress
	}
	return nil
}

func buildPortDelete(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getPort(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	n, err := state.NetworkByID(nil, old.NetworkID)
	if err != nil {
		return nil, "", err
	}
	if !owns(a.Caller, old.ProjectID) && !(n != nil && owns(a.Caller, n.ProjectID)) {
		return nil, "", policyError("delete_port")
	}
	switch old.DeviceOwner {
	case structs.DeviceOwnerRouterInterface, structs.DeviceOwnerRouterGateway, structs.DeviceOwnerFloatingIP:
		return nil, "", structs.NetErrorf(structs.KindConflict, structs.ErrServicePortInUse,
			"Port %s cannot be deleted directly via the port API: has device owner %s.", old.ID, old.DeviceOwner)
	}
	return []*structs.NetChange{{Op: structs.NetOpDelete, Kind: structs.NetKindPort, ID: old.ID}}, old.ID, nil
}

// fillPort adds a port and its binding.
func fillPort(state *fsm.StateStore, ws memdb.WatchSet, obj any, out *structs.NetObjects) error {
	p := obj.(*structs.Port)
	out.Ports = append(out.Ports, p)
	b, err := portBinding(state, ws, p)
	if err != nil {
		return err
	}
	if out.Bindings == nil {
		out.Bindings = map[string]*structs.PortBinding{}
	}
	out.Bindings[p.ID] = b
	return nil
}

// portBinding resolves a port's binding: an instance's port is bound to
// the host the instance is placed on, and up while the instance runs
// there; a router's ports are up with their router; any other port is
// bound where an admin bound it, and down (no dataplane reports yet).
func portBinding(state *fsm.StateStore, ws memdb.WatchSet, p *structs.Port) (*structs.PortBinding, error) {
	b := &structs.PortBinding{HostName: p.BindingHostID, Status: structs.NetStatusDown}
	switch {
	case p.IsCompute() && p.DeviceID != "":
		inst, err := state.InstanceByID(ws, p.DeviceID)
		if err != nil || inst == nil || inst.HostID == "" {
			return b, err
		}
		host, err := state.HostByID(ws, inst.HostID)
		if err != nil {
			return nil, err
		}
		b.HostName, b.HostID = inst.HostID, inst.HostID
		if host != nil {
			b.HostName, b.TunnelIP = host.Name, host.TunnelIP
		}
		if p.AdminStateUp && inst.PowerState == structs.PowerRunning {
			b.Status = structs.NetStatusActive
		}
	case p.IsRouterPort():
		if r, err := state.RouterByID(ws, p.DeviceID); err != nil {
			return nil, err
		} else if r != nil && r.AdminStateUp && p.AdminStateUp {
			b.Status = structs.NetStatusActive
		}
	case p.DeviceOwner == structs.DeviceOwnerFloatingIP:
		b.Status = "N/A"
	}
	return b, nil
}

// listPorts reads the ports a list narrows to: a host's, some devices',
// a network's, or all.
func listPorts(state *fsm.StateStore, ws memdb.WatchSet, a *structs.NetListRequest) ([]*structs.Port, error) {
	switch {
	case a.HostID != "":
		return state.PortsByHost(ws, a.HostID)
	case len(a.DeviceIDs) > 0:
		var out []*structs.Port
		for _, d := range a.DeviceIDs {
			ports, err := state.PortsByDevice(ws, d)
			if err != nil {
				return nil, err
			}
			out = append(out, ports...)
		}
		return out, nil
	}
	return state.Ports(ws, a.NetworkID)
}
