package server

import (
	"sort"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Instances' networking: the ports a boot creates (in the entry that
// creates the instances, so that neither exists without the other),
// interfaces attached and detached later, and what Nova shows.

// computeOwner is the device owner of an instance's ports, Nova's
// "compute:<zone>".
func computeOwner(inst *structs.Instance) string {
	if inst.AZ != "" {
		return structs.DeviceOwnerComputePrefix + inst.AZ
	}
	return structs.DeviceOwnerComputePrefix + "nova"
}

// availableNetworks are the networks a project may boot on without
// naming one, as Nova lists them: its own networks (up ones only for
// "auto") and the shared ones. External networks are left out unless
// shared: a project cannot attach to them.
func availableNetworks(state *fsm.StateStore, projectID string, auto bool) ([]*structs.Network, error) {
	nets, err := state.Networks(nil)
	if err != nil {
		return nil, err
	}
	var out []*structs.Network
	for _, n := range nets {
		switch {
		case n.Shared:
			out = append(out, n)
		case n.External:
		case n.ProjectID == projectID && projectID != "" && (!auto || n.AdminStateUp):
			out = append(out, n)
		}
	}
	return out, nil
}

// bootNetwork checks a network an instance is to have a port on.
func bootNetwork(state *fsm.StateStore, c structs.NetCaller, id string) (*structs.Network, error) {
	n, err := state.NetworkByID(nil, id)
	if err != nil {
		return nil, err
	}
	if n == nil || !seesNetwork(c, n) {
		return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrNetworkNotFound, "Network %s could not be found.", id)
	}
	if n.External && !n.Shared && !c.Admin {
		return nil, structs.NetErrorf(structs.KindPermission, structs.ErrPolicyNotAuthorized,
			"It is not allowed to create an interface on external network %s", n.ID)
	}
	subs, err := state.Subnets(nil, n.ID)
	if err != nil {
		return nil, err
	}
	if len(subs) == 0 {
		return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest,
			"Network %s requires a subnet in order to boot instances on.", n.ID)
	}
	return n, nil
}

// resolveGroups turns security group names or ids into the ids of the
// project's groups; "default" (or nothing) is the project's default
// group, created on this first use.
func resolveGroups(state *fsm.StateStore, projectID string, asked []string) ([]*structs.NetChange, []string, error) {
	if projectID == "" {
		return nil, nil, nil
	}
	var changes []*structs.NetChange
	var ids []string
	if len(asked) == 0 {
		asked = []string{structs.DefaultSecurityGroupName}
	}
	groups, err := state.SecurityGroups(nil, projectID)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for _, name := range asked {
		id := ""
		if name == structs.DefaultSecurityGroupName {
			var c []*structs.NetChange
			if c, id, err = defaultGroupChanges(state, projectID); err != nil {
				return nil, nil, err
			}
			if changes == nil {
				changes = c
			}
		} else {
			for _, g := range groups {
				if g.ID == name || g.Name == name {
					if id != "" && g.Name == name && id != g.ID {
						return nil, nil, structs.NetErrorf(structs.KindConflict, structs.ErrConflict,
							"Multiple security_group matches found for name '%s', use an ID to be more specific.", name)
					}
					id = g.ID
				}
			}
			if id == "" {
				return nil, nil, structs.NetErrorf(structs.KindInvalid, structs.ErrSecurityGroupNotFound, "Security group %s not found.", name)
			}
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return changes, ids, nil
}

// instanceNetworking builds the networking changes of an instance
// create: for each instance, one port per requested network (a new port
// on a network, at a fixed IP when asked, or the user's port bound to
// it), in the order asked (DeviceSeq), with the project's security
// groups. Nova's rules decide what is asked when nothing is: before 2.37
// the one network available to the project, none when there is none;
// "auto" the one available, else an auto-allocated topology.
func (s *Server) instanceNetworking(state *fsm.StateStore, args *structs.InstanceCreateRequest, insts []*structs.Instance) ([]*structs.NetChange, error) {
	if len(insts) == 0 || args.NetworksMode == structs.NetworksNone {
		return nil, nil
	}
	caller := structs.NetCaller{ProjectID: args.ProjectID, Admin: args.NetAdmin || args.ProjectID == ""}
	project := insts[0].ProjectID
	var changes []*structs.NetChange
	requests := args.Networks
	switch args.NetworksMode {
	case structs.NetworksDefault, structs.NetworksAuto:
		avail, err := availableNetworks(state, project, args.NetworksMode == structs.NetworksAuto)
		if err != nil {
			return nil, err
		}
		switch {
		case len(avail) > 1:
			return nil, structs.NetErrorf(structs.KindConflict, structs.ErrNetworkAmbiguous,
				"Multiple possible networks found, use a Network ID to be more specific.")
		case len(avail) == 1:
			requests = []*structs.InstanceNetworkRequest{{NetworkID: avail[0].ID}}
		case args.NetworksMode == structs.NetworksDefault || project == "":
			return nil, nil
		default:
			topo, netID, err := autoTopologyChanges(state, project)
			if err != nil {
				return nil, err
			}
			if err := s.stampSegments(topo); err != nil {
				return nil, err
			}
			changes = append(changes, topo...)
			requests = []*structs.InstanceNetworkRequest{{NetworkID: netID}}
		}
	case structs.NetworksList:
	default:
		return nil, structs.Errorf(structs.KindInvalid, "unknown networks mode %q", args.NetworksMode)
	}
	if len(requests) == 0 {
		return changes, nil
	}
	groupChanges, groups, err := resolveGroups(state, project, args.SecurityGroups)
	if err != nil {
		return nil, err
	}
	changes = append(changes, groupChanges...)
	nets, err := requestedNetworks(state, caller, project, requests, len(insts), changes)
	if err != nil {
		return nil, err
	}
	for _, inst := range insts {
		ports, err := instancePorts(state, caller, inst, requests, nets, groups)
		if err != nil {
			return nil, err
		}
		changes = append(changes, ports...)
	}
	return changes, nil
}

// requestedNetworks checks a boot's network requests and reads the
// networks they name, by id. planned are the changes the boot already
// makes (an auto-allocated topology's network comes first).
func requestedNetworks(state *fsm.StateStore, caller structs.NetCaller, project string, requests []*structs.InstanceNetworkRequest,
	count int, planned []*structs.NetChange) (map[string]*structs.Network, error) {
	nets := map[string]*structs.Network{}
	for _, r := range requests {
		switch {
		case r.PortID != "":
			if count > 1 {
				return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest,
					"Unable to launch multiple instances with a single configured port ID. Please launch your instance one by one with different ports.")
			}
		case r.NetworkID == "":
			return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Bad networks format: network uuid is not in proper format ()")
		default:
			if r.FixedIP != "" && count > 1 {
				return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest,
					"max_count cannot be greater than 1 if an fixed_ip is specified.")
			}
			if _, ok := nets[r.NetworkID]; ok {
				continue
			}
			if n, _ := state.NetworkByID(nil, r.NetworkID); n != nil && n.AutoAllocated && n.ProjectID == project {
				nets[r.NetworkID] = n
				continue
			}
			if len(planned) > 0 && planned[0].Network != nil && planned[0].Network.ID == r.NetworkID {
				nets[r.NetworkID] = planned[0].Network
				continue
			}
			n, err := bootNetwork(state, caller, r.NetworkID)
			if err != nil {
				return nil, err
			}
			nets[r.NetworkID] = n
		}
	}
	return nets, nil
}

// instancePorts are the changes giving one new instance its ports, in
// the order its network requests name them: a user's port claimed, or a
// new port on the request's network.
func instancePorts(state *fsm.StateStore, caller structs.NetCaller, inst *structs.Instance, requests []*structs.InstanceNetworkRequest,
	nets map[string]*structs.Network, groups []string) ([]*structs.NetChange, error) {
	var changes []*structs.NetChange
	for j, r := range requests {
		seq := uint64(j + 1)
		if r.PortID != "" {
			p, err := state.PortByID(nil, r.PortID)
			if err != nil {
				return nil, err
			}
			if p == nil || !seesPort(state, caller, p) {
				return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrPortNotFound, "Port %s could not be found.", r.PortID)
			}
			if p.DeviceID != "" {
				return nil, structs.NetErrorf(structs.KindConflict, structs.ErrPortInUse, "Port %s is still in use.", p.ID)
			}
			if len(p.FixedIPs) == 0 {
				return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Port %s requires a FixedIP in order to be used.", p.ID)
			}
			c := p.Copy()
			c.DeviceID, c.DeviceOwner, c.PreserveOnDelete, c.DeviceSeq, c.Tag = inst.ID, computeOwner(inst), true, seq, r.Tag
			changes = append(changes, &structs.NetChange{Op: structs.NetOpUpdate, Kind: structs.NetKindPort, Expect: p.ModifyIndex, Claim: true, Port: c})
			continue
		}
		n := nets[r.NetworkID]
		p := &structs.Port{ID: uuid.NewString(), NetworkID: n.ID, ProjectID: inst.ProjectID, AdminStateUp: true,
			MACAddress: freeMAC(state, n.ID), DeviceID: inst.ID, DeviceOwner: computeOwner(inst), DeviceSeq: seq, Tag: r.Tag,
			PortSecurityEnabled: n.PortSecurityEnabled, BindingVNICType: structs.VNICTypeNormal}
		if p.PortSecurityEnabled {
			p.SecurityGroups = groups
		}
		auto := true
		if r.FixedIP != "" {
			p.FixedIPs, auto = []structs.FixedIP{{IPAddress: r.FixedIP}}, false
		}
		changes = append(changes, &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindPort, Port: p, AutoIPs: auto})
	}
	return changes, nil
}

// The auto-allocated topology of a project (get-me-a-network): its own
// network and IPv4 subnet and, when the region has an external network
// (the default one, or the only one), a router between them. Its ids
// derive from the project, so concurrent first boots make one topology.
const (
	autoNetworkName = "auto_allocated_network"
	autoSubnetName  = "auto_allocated_subnet_v4"
	autoRouterName  = "auto_allocated_router"
	autoSubnetCIDR  = "10.0.0.0/26"
)

// autoTopologyChanges are the changes that make a project's topology,
// none when it exists; and the topology's network id.
func autoTopologyChanges(state *fsm.StateStore, project string) ([]*structs.NetChange, string, error) {
	netID := derivedID("auto-network", project)
	if n, err := state.NetworkByID(nil, netID); err != nil || n != nil {
		return nil, netID, err
	}
	nets, err := state.Networks(nil)
	if err != nil {
		return nil, "", err
	}
	var external *structs.Network
	count := 0
	for _, n := range nets {
		if n.External {
			count++
			if external == nil || n.IsDefault {
				external = n
			}
		}
	}
	if count > 1 && !external.IsDefault {
		external = nil
	}
	subnetID := derivedID("auto-subnet", project)
	changes := []*structs.NetChange{
		{Op: structs.NetOpEnsure, Kind: structs.NetKindNetwork, Network: &structs.Network{ID: netID, Name: autoNetworkName,
			ProjectID: project, AdminStateUp: true, PortSecurityEnabled: true, AutoAllocated: true}},
		{Op: structs.NetOpEnsure, Kind: structs.NetKindSubnet, Subnet: &structs.Subnet{ID: subnetID, Name: autoSubnetName,
			ProjectID: project, NetworkID: netID, IPVersion: 4, CIDR: autoSubnetCIDR, GatewayIP: "10.0.0.1", EnableDHCP: true}},
	}
	if external != nil {
		routerID := derivedID("auto-router", project)
		r := &structs.Router{ID: routerID, Name: autoRouterName, ProjectID: project, AdminStateUp: true,
			Gateway: &structs.RouterGateway{NetworkID: external.ID, EnableSNAT: true}, GatewayPortID: derivedID("auto-router-gateway", project)}
		changes = append(changes,
			&structs.NetChange{Op: structs.NetOpEnsure, Kind: structs.NetKindRouter, Router: r},
			&structs.NetChange{Op: structs.NetOpEnsure, Kind: structs.NetKindPort, Port: gatewayPort(r, r.Gateway), AutoIPs: true},
			&structs.NetChange{Op: structs.NetOpEnsure, Kind: structs.NetKindPort, Port: &structs.Port{
				ID: derivedID("auto-router-interface", project), NetworkID: netID, ProjectID: project, AdminStateUp: true,
				MACAddress: newMAC(), DeviceOwner: structs.DeviceOwnerRouterInterface, DeviceID: routerID,
				FixedIPs: []structs.FixedIP{{SubnetID: subnetID, IPAddress: "10.0.0.1"}}, BindingVNICType: structs.VNICTypeNormal}})
	}
	return changes, netID, nil
}

func sortFIPs(fips []*structs.FloatingIP) {
	sort.Slice(fips, func(i, j int) bool {
		if fips[i].CreateIndex != fips[j].CreateIndex {
			return fips[i].CreateIndex < fips[j].CreateIndex
		}
		return fips[i].ID < fips[j].ID
	})
}

// buildAttachInterface gives an instance the port AttachInterface asks
// for, and returns the changes and the port's id.
func buildAttachInterface(state *fsm.StateStore, args *structs.InterfaceAttachRequest) ([]*structs.NetChange, string, error) {
	inst, err := state.InstanceByID(nil, args.InstanceID)
	if err != nil {
		return nil, "", err
	}
	if inst == nil || !owns(args.Caller, inst.ProjectID) {
		return nil, "", structs.Errorf(structs.KindNotFound, "Instance %s could not be found.", args.InstanceID)
	}
	existing, err := state.PortsByDevice(nil, inst.ID)
	if err != nil {
		return nil, "", err
	}
	var seq uint64
	for _, p := range existing {
		seq = max(seq, p.DeviceSeq)
	}
	seq++
	if args.PortID != "" {
		p, err := getPort(state, args.Caller, args.PortID)
		if err != nil {
			return nil, "", err
		}
		if p.DeviceID != "" {
			return nil, "", structs.NetErrorf(structs.KindConflict, structs.ErrPortInUse, "Port %s is still in use.", p.ID)
		}
		if len(p.FixedIPs) == 0 {
			return nil, "", structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Port %s requires a FixedIP in order to be used.", p.ID)
		}
		c := p.Copy()
		c.DeviceID, c.DeviceOwner, c.PreserveOnDelete, c.DeviceSeq, c.Tag = inst.ID, computeOwner(inst), true, seq, args.Tag
		return []*structs.NetChange{{Op: structs.NetOpUpdate, Kind: structs.NetKindPort, Expect: p.ModifyIndex, Claim: true, Port: c}}, c.ID, nil
	}
	n, err := attachNetwork(state, args, inst.ProjectID)
	if err != nil {
		return nil, "", err
	}
	changes, groups, err := resolveGroups(state, inst.ProjectID, nil)
	if err != nil {
		return nil, "", err
	}
	p := &structs.Port{ID: uuid.NewString(), NetworkID: n.ID, ProjectID: inst.ProjectID, AdminStateUp: true,
		MACAddress: freeMAC(state, n.ID), DeviceID: inst.ID, DeviceOwner: computeOwner(inst), DeviceSeq: seq, Tag: args.Tag,
		PortSecurityEnabled: n.PortSecurityEnabled, FixedIPs: args.FixedIPs, BindingVNICType: structs.VNICTypeNormal}
	if p.PortSecurityEnabled {
		p.SecurityGroups = groups
	}
	return append(changes, &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindPort, Port: p,
		AutoIPs: len(args.FixedIPs) == 0}), p.ID, nil
}

// attachNetwork is the network a new interface's port is made on: the
// one asked for, else the project's only available network.
func attachNetwork(state *fsm.StateStore, args *structs.InterfaceAttachRequest, projectID string) (*structs.Network, error) {
	netID := args.NetworkID
	if netID == "" {
		avail, err := availableNetworks(state, projectID, false)
		if err != nil {
			return nil, err
		}
		switch len(avail) {
		case 0:
			return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest,
				"No specific network was requested and none are available for project '%s'.", projectID)
		case 1:
			netID = avail[0].ID
		default:
			return nil, structs.NetErrorf(structs.KindConflict, structs.ErrNetworkAmbiguous,
				"Multiple possible networks found, use a Network ID to be more specific.")
		}
	}
	n, err := bootNetwork(state, args.Caller, netID)
	if err != nil {
		if structs.ErrorType(err) == structs.ErrNetworkNotFound {
			return nil, structs.NetNotFound(structs.NetKindNetwork, netID)
		}
		return nil, err
	}
	return n, nil
}
