package server

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Net is the endpoint for networking: networks, subnets, ports,
// security groups and rules, floating IPs and routers (Neutron's
// resources), the interfaces of instances, and what Nova shows of them.
// Every write is one NetApplyEntry (see fsm/net_apply.go); the policy
// is Neutron's, applied here for the caller the request names.
type Net struct{ srv *Server }

type netBuilder func(*fsm.StateStore, *structs.NetWriteRequest) ([]*structs.NetChange, string, error)

var (
	netCreators = map[string]netBuilder{
		structs.NetKindNetwork: buildNetworkCreate, structs.NetKindSubnet: buildSubnetCreate,
		structs.NetKindPort: buildPortCreate, structs.NetKindSecurityGroup: buildGroupCreate,
		structs.NetKindSecurityGroupRule: buildRuleCreate, structs.NetKindFloatingIP: buildFloatingIPCreate,
		structs.NetKindRouter: buildRouterCreate,
	}
	netUpdaters = map[string]netBuilder{
		structs.NetKindNetwork: buildNetworkUpdate, structs.NetKindSubnet: buildSubnetUpdate,
		structs.NetKindPort: buildPortUpdate, structs.NetKindSecurityGroup: buildGroupUpdate,
		structs.NetKindSecurityGroupRule: buildRuleUpdate, structs.NetKindFloatingIP: buildFloatingIPUpdate,
		structs.NetKindRouter: buildRouterUpdate,
	}
	netDeleters = map[string]netBuilder{
		structs.NetKindNetwork: buildNetworkDelete, structs.NetKindSubnet: buildSubnetDelete,
		structs.NetKindPort: buildPortDelete, structs.NetKindSecurityGroup: buildGroupDelete,
		structs.NetKindSecurityGroupRule: buildRuleDelete, structs.NetKindFloatingIP: buildFloatingIPDelete,
		structs.NetKindRouter: buildRouterDelete,
	}
)

func unknownKind(kind string) error {
	return structs.Errorf(structs.KindInvalid, "unknown networking kind %q", kind)
}

// write proposes the changes a builder makes and answers with the
// object as stored (nothing for a delete).
func (e *Net) write(builders map[string]netBuilder, args *structs.NetWriteRequest, reply *structs.NetWriteResponse, show bool) error {
	build, ok := builders[args.Kind]
	if !ok {
		return unknownKind(args.Kind)
	}
	var id string
	index, err := e.srv.applyNet(func(state *fsm.StateStore) ([]*structs.NetChange, error) {
		changes, oid, err := build(state, args)
		id = oid
		return changes, err
	})
	if err != nil {
		return err
	}
	reply.Index = index
	if !show {
		return nil
	}
	state := e.srv.fsm.State()
	obj, err := netObject(state, args.Kind, id)
	if err != nil {
		return err
	}
	if obj == nil {
		return structs.NetNotFound(args.Kind, id)
	}
	return fillNetObjects(state, nil, args.Kind, []any{obj}, &reply.NetObjects)
}

// Create creates an object.
func (e *Net) Create(args *structs.NetWriteRequest, reply *structs.NetWriteResponse) error {
	if done, err := e.srv.forward("Net.Create", args, args, reply); done {
		return err
	}
	return e.write(netCreators, args, reply, true)
}

// Update changes the attributes Fields names.
func (e *Net) Update(args *structs.NetWriteRequest, reply *structs.NetWriteResponse) error {
	if done, err := e.srv.forward("Net.Update", args, args, reply); done {
		return err
	}
	return e.write(netUpdaters, args, reply, true)
}

// Delete deletes an object.
func (e *Net) Delete(args *structs.NetWriteRequest, reply *structs.NetWriteResponse) error {
	if done, err := e.srv.forward("Net.Delete", args, args, reply); done {
		return err
	}
	return e.write(netDeleters, args, reply, false)
}

// RouterInterface adds or removes a router interface.
func (e *Net) RouterInterface(args *structs.RouterInterfaceRequest, reply *structs.RouterInterfaceResponse) error {
	if done, err := e.srv.forward("Net.RouterInterface", args, args, reply); done {
		return err
	}
	index, err := e.srv.applyNet(func(state *fsm.StateStore) ([]*structs.NetChange, error) {
		*reply = structs.RouterInterfaceResponse{}
		return buildRouterInterface(state, args, reply)
	})
	reply.Index = index
	return err
}

// netIndex is the index networking reads reflect: any networking table,
// and the instances and hosts that ports' bindings follow.
func netIndex(state *fsm.StateStore) uint64 {
	var idx uint64
	for _, t := range []string{fsm.TableNetworks, fsm.TableSubnets, fsm.TablePorts, fsm.TableSecurityGroups,
		fsm.TableSecurityGroupRules, fsm.TableFloatingIPs, fsm.TableRouters, fsm.TableInstances} {
		idx = max(idx, state.Index(t))
	}
	return idx
}

// netObject reads one object of a kind, nil when missing.
func netObject(state *fsm.StateStore, kind, id string) (any, error) {
	var obj any
	var err error
	switch kind {
	case structs.NetKindNetwork:
		var v *structs.Network
		v, err = state.NetworkByID(nil, id)
		if v != nil {
			obj = v
		}
	case structs.NetKindSubnet:
		var v *structs.Subnet
		v, err = state.SubnetByID(nil, id)
		if v != nil {
			obj = v
		}
	case structs.NetKindPort:
		var v *structs.Port
		v, err = state.PortByID(nil, id)
		if v != nil {
			obj = v
		}
	case structs.NetKindSecurityGroup:
		var v *structs.SecurityGroup
		v, err = state.SecurityGroupByID(nil, id)
		if v != nil {
			obj = v
		}
	case structs.NetKindSecurityGroupRule:
		var v *structs.SecurityGroupRule
		v, err = state.SecurityGroupRuleByID(nil, id)
		if v != nil {
			obj = v
		}
	case structs.NetKindFloatingIP:
		var v *structs.FloatingIP
		v, err = state.FloatingIPByID(nil, id)
		if v != nil {
			obj = v
		}
	case structs.NetKindRouter:
		var v *structs.Router
		v, err = state.RouterByID(nil, id)
		if v != nil {
			obj = v
		}
	default:
		return nil, unknownKind(kind)
	}
	return obj, err
}

// visible reports whether the caller may see an object.
func visible(state *fsm.StateStore, c structs.NetCaller, obj any) bool {
	switch v := obj.(type) {
	case *structs.Network:
		return seesNetwork(c, v)
	case *structs.Subnet:
		return seesSubnet(state, c, v)
	case *structs.Port:
		return seesPort(state, c, v)
	case *structs.SecurityGroup:
		return owns(c, v.ProjectID)
	case *structs.SecurityGroupRule:
		return owns(c, v.ProjectID)
	case *structs.FloatingIP:
		return owns(c, v.ProjectID)
	case *structs.Router:
		return owns(c, v.ProjectID)
	}
	return false
}

// fillNetObjects puts objects of a kind into out with what their views
// need: networks' subnets, ports' bindings, groups' rules.
func fillNetObjects(state *fsm.StateStore, ws memdb.WatchSet, kind string, objs []any, out *structs.NetObjects) error {
	for _, obj := range objs {
		switch v := obj.(type) {
		case *structs.Network:
			out.Networks = append(out.Networks, v)
			subs, err := state.Subnets(ws, v.ID)
			if err != nil {
				return err
			}
			if out.SubnetIDs == nil {
				out.SubnetIDs = map[string][]string{}
			}
			ids := make([]string, 0, len(subs))
			for _, s := range subs {
				ids = append(ids, s.ID)
			}
			out.SubnetIDs[v.ID] = ids
		case *structs.Subnet:
			out.Subnets = append(out.Subnets, v)
		case *structs.Port:
			out.Ports = append(out.Ports, v)
			b, err := portBinding(state, ws, v)
			if err != nil {
				return err
			}
			if out.Bindings == nil {
				out.Bindings = map[string]*structs.PortBinding{}
			}
			out.Bindings[v.ID] = b
		case *structs.SecurityGroup:
			out.SecurityGroups = append(out.SecurityGroups, v)
			rules, err := state.SecurityGroupRules(ws, v.ID)
			if err != nil {
				return err
			}
			out.SecurityGroupRules = append(out.SecurityGroupRules, rules...)
		case *structs.SecurityGroupRule:
			out.SecurityGroupRules = append(out.SecurityGroupRules, v)
		case *structs.FloatingIP:
			out.FloatingIPs = append(out.FloatingIPs, v)
		case *structs.Router:
			out.Routers = append(out.Routers, v)
		}
	}
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
		b.HostName = inst.HostID
		if host != nil {
			b.HostName = host.Name
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

// Get reads one object the caller may see.
func (e *Net) Get(args *structs.NetGetRequest, reply *structs.NetListResponse) error {
	if done, err := e.srv.forward("Net.Get", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		reply.NetObjects = structs.NetObjects{}
		obj, err := netObject(state, args.Kind, args.ID)
		if err != nil {
			return nil, 0, err
		}
		if obj == nil || !visible(state, args.Caller, obj) {
			return nil, 0, structs.NetNotFound(args.Kind, args.ID)
		}
		return obj, netIndex(state), fillNetObjects(state, ws, args.Kind, []any{obj}, &reply.NetObjects)
	})
}

// List lists the objects of a kind the caller may see. A project's
// first listing of security groups creates its default group, as
// Neutron's does.
func (e *Net) List(args *structs.NetListRequest, reply *structs.NetListResponse) error {
	if done, err := e.srv.forward("Net.List", args, args, reply); done {
		return err
	}
	if args.Kind == structs.NetKindSecurityGroup && args.Caller.ProjectID != "" && !args.AllowStale {
		if _, err := e.srv.applyNet(func(state *fsm.StateStore) ([]*structs.NetChange, error) {
			changes, _, err := defaultGroupChanges(state, args.Caller.ProjectID)
			return changes, err
		}); err != nil {
			return err
		}
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		reply.NetObjects = structs.NetObjects{}
		objs, err := listNet(state, ws, args)
		if err != nil {
			return nil, 0, err
		}
		return objs, netIndex(state), fillNetObjects(state, ws, args.Kind, objs, &reply.NetObjects)
	})
}

// listNet reads the objects a list asks for, visible to its caller.
func listNet(state *fsm.StateStore, ws memdb.WatchSet, a *structs.NetListRequest) ([]any, error) {
	var objs []any
	add := func(obj any) {
		if visible(state, a.Caller, obj) {
			objs = append(objs, obj)
		}
	}
	switch a.Kind {
	case structs.NetKindNetwork:
		nets, err := state.Networks(ws)
		if err != nil {
			return nil, err
		}
		for _, n := range nets {
			add(n)
		}
	case structs.NetKindSubnet:
		subs, err := state.Subnets(ws, a.NetworkID)
		if err != nil {
			return nil, err
		}
		for _, s := range subs {
			add(s)
		}
	case structs.NetKindPort:
		ports, err := listPorts(state, ws, a)
		if err != nil {
			return nil, err
		}
		for _, p := range ports {
			add(p)
		}
	case structs.NetKindSecurityGroup:
		gs, err := state.SecurityGroups(ws, "")
		if err != nil {
			return nil, err
		}
		for _, g := range gs {
			add(g)
		}
	case structs.NetKindSecurityGroupRule:
		rs, err := state.SecurityGroupRules(ws, "")
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			add(r)
		}
	case structs.NetKindFloatingIP:
		fs, err := state.FloatingIPs(ws, "")
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			add(f)
		}
	case structs.NetKindRouter:
		rs, err := state.Routers(ws, "")
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			add(r)
		}
	default:
		return nil, unknownKind(a.Kind)
	}
	return narrow(objs, a), nil
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

// narrow keeps the objects a list's ids, network and project name.
func narrow(objs []any, a *structs.NetListRequest) []any {
	if len(a.IDs) == 0 && a.ProjectID == "" && a.NetworkID == "" {
		return objs
	}
	ids := map[string]bool{}
	for _, id := range a.IDs {
		ids[id] = true
	}
	out := objs[:0]
	for _, obj := range objs {
		id, project, network := netFields(obj)
		if len(ids) > 0 && !ids[id] {
			continue
		}
		if a.ProjectID != "" && project != a.ProjectID {
			continue
		}
		if a.NetworkID != "" && network != "" && network != a.NetworkID {
			continue
		}
		out = append(out, obj)
	}
	return out
}

// netFields are an object's id, project and network.
func netFields(obj any) (id, project, network string) {
	switch v := obj.(type) {
	case *structs.Network:
		return v.ID, v.ProjectID, v.ID
	case *structs.Subnet:
		return v.ID, v.ProjectID, v.NetworkID
	case *structs.Port:
		return v.ID, v.ProjectID, v.NetworkID
	case *structs.SecurityGroup:
		return v.ID, v.ProjectID, ""
	case *structs.SecurityGroupRule:
		return v.ID, v.ProjectID, ""
	case *structs.FloatingIP:
		return v.ID, v.ProjectID, v.FloatingNetworkID
	case *structs.Router:
		return v.ID, v.ProjectID, ""
	}
	return "", "", ""
}
