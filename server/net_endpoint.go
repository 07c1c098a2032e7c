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

// write proposes the changes a builder makes and answers with the
// object as stored (nothing for a delete).
func (e *Net) write(op func(netKind) netBuilder, args *structs.NetWriteRequest, reply *structs.NetWriteResponse, show bool) error {
	k, err := lookupNetKind(args.Kind)
	if err != nil {
		return err
	}
	build := op(k)
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
	return e.write(func(k netKind) netBuilder { return k.create }, args, reply, true)
}

// Update changes the attributes Fields names.
func (e *Net) Update(args *structs.NetWriteRequest, reply *structs.NetWriteResponse) error {
	if done, err := e.srv.forward("Net.Update", args, args, reply); done {
		return err
	}
	return e.write(func(k netKind) netBuilder { return k.update }, args, reply, true)
}

// Delete deletes an object.
func (e *Net) Delete(args *structs.NetWriteRequest, reply *structs.NetWriteResponse) error {
	if done, err := e.srv.forward("Net.Delete", args, args, reply); done {
		return err
	}
	return e.write(func(k netKind) netBuilder { return k.delete }, args, reply, false)
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
	return state.MaxIndex(netIndexTables...)
}

var netIndexTables = []string{fsm.TableNetworks, fsm.TableSubnets, fsm.TablePorts, fsm.TableSecurityGroups,
	fsm.TableSecurityGroupRules, fsm.TableFloatingIPs, fsm.TableRouters, fsm.TableInstances}

// Get reads one object the caller may see.
func (e *Net) Get(args *structs.NetGetRequest, reply *structs.NetListResponse) error {
	if done, err := e.srv.forward("Net.Get", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		reply.NetObjects = structs.NetObjects{}
		k, err := lookupNetKind(args.Kind)
		if err != nil {
			return nil, 0, err
		}
		obj, err := state.NetObject(nil, args.Kind, args.ID)
		if err != nil {
			return nil, 0, err
		}
		if obj == nil || !k.visible(state, args.Caller, obj) {
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
