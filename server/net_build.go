package server

import (
	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// The builders turn one Net.Create, Net.Update or Net.Delete into the
// changes of a NetApplyEntry, after Neutron's policy. They read the
// state the entry is decided on; the FSM checks again what a concurrent
// entry could change. Each returns the changes and the id of the object
// the caller asked about.

func readOnly(attr string) error {
	return structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Cannot update read-only attribute %s", attr)
}

// getNetwork reads a network the caller may see.
func getNetwork(state *fsm.StateStore, c structs.NetCaller, id string) (*structs.Network, error) {
	n, err := state.NetworkByID(nil, id)
	if err != nil {
		return nil, err
	}
	if n == nil || !seesNetwork(c, n) {
		return nil, structs.NetNotFound(structs.NetKindNetwork, id)
	}
	return n, nil
}

// --- networks ---

func buildNetworkCreate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	if a.Network == nil {
		return nil, "", structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Resource body required")
	}
	n := a.Network.Copy()
	var err error
	if n.ProjectID, err = ownerOf(a.Caller, n.ProjectID); err != nil {
		return nil, "", err
	}
	if !a.Caller.Admin {
		for _, f := range []string{"shared", "router:external", "is_default", "provider:network_type",
			"provider:physical_network", "provider:segmentation_id"} {
			if a.Has(f) {
				return nil, "", policyError("create_network:" + f)
			}
		}
	}
	n.ID, n.AutoAllocated = uuid.NewString(), false
	if err := n.Validate(); err != nil {
		return nil, "", err
	}
	return []*structs.NetChange{{Op: structs.NetOpCreate, Kind: structs.NetKindNetwork, Network: n}}, n.ID, nil
}

func buildNetworkUpdate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getNetwork(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	if !owns(a.Caller, old.ProjectID) {
		return nil, "", policyError("update_network")
	}
	in := a.Network
	if in == nil {
		in = &structs.Network{}
	}
	n := old.Copy()
	for _, f := range a.Fields {
		switch f {
		case "name":
			n.Name = in.Name
		case "description":
			n.Description = in.Description
		case "admin_state_up":
			n.AdminStateUp = in.AdminStateUp
		case "mtu":
			n.MTU = in.MTU
		case "port_security_enabled":
			n.PortSecurityEnabled = in.PortSecurityEnabled
		case "shared", "router:external", "is_default":
			if !a.Caller.Admin {
				return nil, "", policyError("update_network:" + f)
			}
			switch f {
			case "shared":
				n.Shared = in.Shared
			case "router:external":
				n.External = in.External
			default:
				n.IsDefault = in.IsDefault
			}
		case "provider:network_type", "provider:physical_network", "provider:segmentation_id":
			return nil, "", structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidInput,
				"Invalid input for operation: Plugin does not support updating the following provider network attributes: %s.", f)
		default:
			return nil, "", readOnly(f)
		}
	}
	return []*structs.NetChange{{Op: structs.NetOpUpdate, Kind: structs.NetKindNetwork, Expect: old.ModifyIndex, Network: n}}, n.ID, nil
}

func buildNetworkDelete(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getNetwork(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	if !owns(a.Caller, old.ProjectID) {
		return nil, "", policyError("delete_network")
	}
	return []*structs.NetChange{{Op: structs.NetOpDelete, Kind: structs.NetKindNetwork, ID: old.ID}}, old.ID, nil
}

// --- subnets ---

func getSubnet(state *fsm.StateStore, c structs.NetCaller, id string) (*structs.Subnet, error) {
	s, err := state.SubnetByID(nil, id)
	if err != nil {
		return nil, err
	}
	if s == nil || !seesSubnet(state, c, s) {
		return nil, structs.NetNotFound(structs.NetKindSubnet, id)
	}
	return s, nil
}

func buildSubnetCreate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	if a.Subnet == nil {
		return nil, "", structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Resource body required")
	}
	s := a.Subnet.Copy()
	n, err := getNetwork(state, a.Caller, s.NetworkID)
	if err != nil {
		return nil, "", err
	}
	if !owns(a.Caller, n.ProjectID) {
		return nil, "", policyError("create_subnet")
	}
	if s.ProjectID, err = ownerOf(a.Caller, s.ProjectID); err != nil {
		return nil, "", err
	}
	if !a.Has("gateway_ip") {
		p, err := structs.ParseSubnetCIDR(s.CIDR, s.IPVersion)
		if err != nil {
			return nil, "", err
		}
		s.GatewayIP = structs.DefaultGateway(p).String()
	}
	s.ID = uuid.NewString()
	if err := s.Normalize(); err != nil {
		return nil, "", err
	}
	return []*structs.NetChange{{Op: structs.NetOpCreate, Kind: structs.NetKindSubnet, Subnet: s}}, s.ID, nil
}

func buildSubnetUpdate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getSubnet(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	if !owns(a.Caller, old.ProjectID) {
		return nil, "", policyError("update_subnet")
	}
	in := a.Subnet
	if in == nil {
		in = &structs.Subnet{}
	}
	s := old.Copy()
	for _, f := range a.Fields {
		switch f {
		case "name":
			s.Name = in.Name
		case "description":
			s.Description = in.Description
		case "gateway_ip":
			s.GatewayIP = in.GatewayIP
		case "allocation_pools":
			s.AllocationPools = append([]structs.IPRange(nil), in.AllocationPools...)
			if len(s.AllocationPools) == 0 {
				s.AllocationPools = nil
			}
		case "dns_nameservers":
			s.DNSNameservers = append([]string(nil), in.DNSNameservers...)
		case "host_routes":
			s.HostRoutes = append([]structs.HostRoute(nil), in.HostRoutes...)
		case "enable_dhcp":
			s.EnableDHCP = in.EnableDHCP
		default:
			return nil, "", readOnly(f)
		}
	}
	if err := s.Normalize(); err != nil {
		return nil, "", err
	}
	return []*structs.NetChange{{Op: structs.NetOpUpdate, Kind: structs.NetKindSubnet, Expect: old.ModifyIndex, Subnet: s}}, s.ID, nil
}

func buildSubnetDelete(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getSubnet(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	if !owns(a.Caller, old.ProjectID) {
		return nil, "", policyError("delete_subnet")
	}
	return []*structs.NetChange{{Op: structs.NetOpDelete, Kind: structs.NetKindSubnet, ID: old.ID}}, old.ID, nil
}

// --- ports ---

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
			if !a.Caller.Admin && f != "binding:vnic_type" {
				return nil, "", policyError("update_port:" + f)
			}
			switch f {
			case "binding:host_id":
				p.BindingHostID = in.BindingHostID
			case "binding:profile":
				p.BindingProfile = in.BindingProfile
			case "binding:vnic_type":
				p.BindingVNICType = in.BindingVNICType
			default:
				if old.DeviceID != "" && in.MACAddress != old.MACAddress {
					return nil, "", structs.NetErrorf(structs.KindConflict, structs.ErrPortInUse,
						"Unable to complete operation on port %s, port is already bound, port type: %s, old_mac %s, new_mac %s.",
						old.ID, structs.VIFTypeBridge, old.MACAddress, in.MACAddress)
				}
				p.MACAddress = in.MACAddress
			}
		default:
			return nil, "", readOnly(f)
		}
	}
	return []*structs.NetChange{{Op: structs.NetOpUpdate, Kind: structs.NetKindPort, Expect: old.ModifyIndex, Port: p}}, p.ID, nil
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

// --- security groups and rules ---

func getGroup(state *fsm.StateStore, c structs.NetCaller, id string) (*structs.SecurityGroup, error) {
	g, err := state.SecurityGroupByID(nil, id)
	if err != nil {
		return nil, err
	}
	if g == nil || !owns(c, g.ProjectID) {
		return nil, structs.NetNotFound(structs.NetKindSecurityGroup, id)
	}
	return g, nil
}

func buildGroupCreate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	if a.SecurityGroup == nil {
		return nil, "", structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Resource body required")
	}
	g := a.SecurityGroup.Copy()
	var err error
	if g.ProjectID, err = ownerOf(a.Caller, g.ProjectID); err != nil {
		return nil, "", err
	}
	if !a.Has("stateful") {
		g.Stateful = true
	}
	var changes []*structs.NetChange
	if g.ProjectID != "" {
		if changes, _, err = defaultGroupChanges(state, g.ProjectID); err != nil {
			return nil, "", err
		}
	}
	if g.Name == structs.DefaultSecurityGroupName {
		return nil, "", structs.NetErrorf(structs.KindConflict, structs.ErrConflict, "Default security group already exists.")
	}
	g.ID = uuid.NewString()
	changes = append(changes, &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindSecurityGroup, SecurityGroup: g})
	for _, r := range structs.NewSecurityGroupRules(g.ID, g.ProjectID, [2]string{uuid.NewString(), uuid.NewString()}) {
		changes = append(changes, &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindSecurityGroupRule, Rule: r})
	}
	return changes, g.ID, nil
}

func buildGroupUpdate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getGroup(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	in := a.SecurityGroup
	if in == nil {
		in = &structs.SecurityGroup{}
	}
	g := old.Copy()
	for _, f := range a.Fields {
		switch f {
		case "name":
			if isDefaultGroup(old) && in.Name != old.Name {
				return nil, "", structs.NetErrorf(structs.KindConflict, structs.ErrConflict, "Updating default security group not allowed.")
			}
			g.Name = in.Name
		case "description":
			g.Description = in.Description
		case "stateful":
			g.Stateful = in.Stateful
		default:
			return nil, "", readOnly(f)
		}
	}
	return []*structs.NetChange{{Op: structs.NetOpUpdate, Kind: structs.NetKindSecurityGroup, Expect: old.ModifyIndex, SecurityGroup: g}}, g.ID, nil
}

func buildGroupDelete(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getGroup(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	if isDefaultGroup(old) && !a.Caller.Admin {
		return nil, "", structs.NetErrorf(structs.KindConflict, structs.ErrSecurityGroupCannotRemoveDefault,
			"Insufficient rights for removing default security group.")
	}
	return []*structs.NetChange{{Op: structs.NetOpDelete, Kind: structs.NetKindSecurityGroup, ID: old.ID}}, old.ID, nil
}

func buildRuleCreate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	if a.Rule == nil {
		return nil, "", structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Resource body required")
	}
	r := a.Rule.Copy()
	g, err := getGroup(state, a.Caller, r.SecurityGroupID)
	if err != nil {
		return nil, "", err
	}
	if r.RemoteGroupID != "" {
		if _, err := getGroup(state, a.Caller, r.RemoteGroupID); err != nil {
			return nil, "", err
		}
	}
	if err := r.Normalize(); err != nil {
		return nil, "", err
	}
	r.ID, r.ProjectID = uuid.NewString(), g.ProjectID
	return []*structs.NetChange{{Op: structs.NetOpCreate, Kind: structs.NetKindSecurityGroupRule, Rule: r}}, r.ID, nil
}

func buildRuleUpdate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := state.SecurityGroupRuleByID(nil, a.ID)
	if err != nil {
		return nil, "", err
	}
	if old == nil || !owns(a.Caller, old.ProjectID) {
		return nil, "", structs.NetNotFound(structs.NetKindSecurityGroupRule, a.ID)
	}
	r := old.Copy()
	for _, f := range a.Fields {
		if f != "description" {
			return nil, "", readOnly(f)
		}
		if a.Rule != nil {
			r.Description = a.Rule.Description
		}
	}
	return []*structs.NetChange{{Op: structs.NetOpUpdate, Kind: structs.NetKindSecurityGroupRule, Expect: old.ModifyIndex, Rule: r}}, r.ID, nil
}

func buildRuleDelete(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := state.SecurityGroupRuleByID(nil, a.ID)
	if err != nil {
		return nil, "", err
	}
	if old == nil || !owns(a.Caller, old.ProjectID) {
		return nil, "", structs.NetNotFound(structs.NetKindSecurityGroupRule, a.ID)
	}
	return []*structs.NetChange{{Op: structs.NetOpDelete, Kind: structs.NetKindSecurityGroupRule, ID: old.ID}}, old.ID, nil
}

// --- floating IPs ---

func getFloatingIP(state *fsm.StateStore, c structs.NetCaller, id string) (*structs.FloatingIP, error) {
	f, err := state.FloatingIPByID(nil, id)
	if err != nil {
		return nil, err
	}
	if f == nil || !owns(c, f.ProjectID) {
		return nil, structs.NetNotFound(structs.NetKindFloatingIP, id)
	}
	return f, nil
}

// checkAssociation checks the port a floating IP is to be associated
// with is the caller's.
func checkAssociation(state *fsm.StateStore, c structs.NetCaller, f *structs.FloatingIP) error {
	if f.PortID == "" {
		return nil
	}
	p, err := getPort(state, c, f.PortID)
	if err != nil {
		return err
	}
	if !owns(c, p.ProjectID) {
		return structs.NetNotFound(structs.NetKindPort, f.PortID)
	}
	return nil
}

func buildFloatingIPCreate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	if a.FloatingIP == nil {
		return nil, "", structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Resource body required")
	}
	f := a.FloatingIP.Copy()
	n, err := getNetwork(state, a.Caller, f.FloatingNetworkID)
	if err != nil {
		return nil, "", err
	}
	if !n.External {
		return nil, "", structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest,
			"Bad floatingip request: Network %s is not a valid external network.", n.ID)
	}
	if f.ProjectID, err = ownerOf(a.Caller, f.ProjectID); err != nil {
		return nil, "", err
	}
	if f.FloatingIPAddress != "" && !a.Caller.Admin {
		return nil, "", policyError("create_floatingip:floating_ip_address")
	}
	if err := checkAssociation(state, a.Caller, f); err != nil {
		return nil, "", err
	}
	f.ID, f.FloatingPortID = uuid.NewString(), uuid.NewString()
	port := &structs.Port{ID: f.FloatingPortID, NetworkID: n.ID, AdminStateUp: true, MACAddress: freeMAC(state, n.ID),
		DeviceOwner: structs.DeviceOwnerFloatingIP, DeviceID: f.ID, BindingVNICType: structs.VNICTypeNormal}
	auto := true
	if f.FloatingIPAddress != "" || a.SubnetID != "" {
		port.FixedIPs, auto = []structs.FixedIP{{SubnetID: a.SubnetID, IPAddress: f.FloatingIPAddress}}, false
	}
	return []*structs.NetChange{
		{Op: structs.NetOpCreate, Kind: structs.NetKindFloatingIP, FloatingIP: f},
		{Op: structs.NetOpCreate, Kind: structs.NetKindPort, Port: port, AutoIPs: auto},
	}, f.ID, nil
}

func buildFloatingIPUpdate(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getFloatingIP(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	in := a.FloatingIP
	if in == nil {
		in = &structs.FloatingIP{}
	}
	f := old.Copy()
	for _, fl := range a.Fields {
		switch fl {
		case "port_id":
			f.PortID = in.PortID
			if !a.Has("fixed_ip_address") {
				f.FixedIPAddress = ""
			}
		case "fixed_ip_address":
			f.FixedIPAddress = in.FixedIPAddress
		case "description":
			f.Description = in.Description
		default:
			return nil, "", readOnly(fl)
		}
	}
	if err := checkAssociation(state, a.Caller, f); err != nil {
		return nil, "", err
	}
	return []*structs.NetChange{{Op: structs.NetOpUpdate, Kind: structs.NetKindFloatingIP, Expect: old.ModifyIndex, FloatingIP: f}}, f.ID, nil
}

func buildFloatingIPDelete(state *fsm.StateStore, a *structs.NetWriteRequest) ([]*structs.NetChange, string, error) {
	old, err := getFloatingIP(state, a.Caller, a.ID)
	if err != nil {
		return nil, "", err
	}
	return []*structs.NetChange{{Op: structs.NetOpDelete, Kind: structs.NetKindFloatingIP, ID: old.ID}}, old.ID, nil
}

// --- routers ---

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
