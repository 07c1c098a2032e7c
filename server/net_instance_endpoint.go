package server

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// AutoTopology reads, or with Create makes, a project's auto-allocated
// topology (Neutron's auto-allocated-topology).
func (e *Net) AutoTopology(args *structs.AutoTopologyRequest, reply *structs.AutoTopologyResponse) error {
	if done, err := e.srv.forward("Net.AutoTopology", args, args, reply); done {
		return err
	}
	project := args.ProjectID
	if project == "" {
		project = args.Caller.ProjectID
	}
	if !owns(args.Caller, project) {
		return policyError("get_auto_allocated_topology")
	}
	reply.ProjectID = project
	if !args.Create {
		reply.NetworkID = derivedID("auto-network", project)
		n, err := e.srv.fsm.State().NetworkByID(nil, reply.NetworkID)
		if err != nil {
			return err
		}
		if n == nil {
			return structs.NetErrorf(structs.KindNotFound, structs.ErrNotFound, "Auto-allocated topology for project %s could not be found.", project)
		}
		return nil
	}
	index, err := e.srv.applyNet(func(state *fsm.StateStore) ([]*structs.NetChange, error) {
		changes, id, err := autoTopologyChanges(state, project)
		reply.NetworkID = id
		return changes, err
	})
	reply.Index = index
	return err
}

// Addresses reads what Nova shows of instances' networking: their
// ports in order, with network names, floating IPs and groups.
func (e *Net) Addresses(args *structs.NetAddressesRequest, reply *structs.NetAddressesResponse) error {
	if done, err := e.srv.forward("Net.Addresses", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		reply.Instances = map[string]*structs.InstanceNetInfo{}
		nets := map[string]*structs.Network{}
		groups := map[string]*structs.SecurityGroup{}
		for _, id := range args.InstanceIDs {
			ports, err := state.PortsByDevice(ws, id)
			if err != nil {
				return nil, 0, err
			}
			info := &structs.InstanceNetInfo{}
			seenGroup := map[string]bool{}
			for _, p := range ports {
				if !p.IsCompute() {
					continue
				}
				n, ok := nets[p.NetworkID]
				if !ok {
					if n, err = state.NetworkByID(ws, p.NetworkID); err != nil {
						return nil, 0, err
					}
					nets[p.NetworkID] = n
				}
				iface := &structs.InstanceInterface{PortID: p.ID, NetworkID: p.NetworkID, MACAddress: p.MACAddress,
					FixedIPs: append([]structs.FixedIP(nil), p.FixedIPs...), Tag: p.Tag}
				if n != nil {
					iface.NetworkName = n.Name
				}
				b, err := portBinding(state, ws, p)
				if err != nil {
					return nil, 0, err
				}
				iface.Status = b.Status
				fips, err := state.FloatingIPsByPort(ws, p.ID)
				if err != nil {
					return nil, 0, err
				}
				sortFIPs(fips)
				for _, f := range fips {
					if f.FloatingIPAddress != "" {
						iface.FloatingIPs = append(iface.FloatingIPs, f.FloatingIPAddress)
					}
				}
				info.Interfaces = append(info.Interfaces, iface)
				for _, gid := range p.SecurityGroups {
					g, ok := groups[gid]
					if !ok {
						if g, err = state.SecurityGroupByID(ws, gid); err != nil {
							return nil, 0, err
						}
						groups[gid] = g
					}
					if g != nil && !seenGroup[g.Name] {
						seenGroup[g.Name] = true
						info.SecurityGroups = append(info.SecurityGroups, g.Name)
					}
				}
			}
			if len(info.Interfaces) > 0 {
				reply.Instances[id] = info
			}
		}
		return reply.Instances, netIndex(state), nil
	})
}

// AttachInterface gives an instance another port: a new one on a
// network (the one available when none is named), or the user's port.
func (e *Net) AttachInterface(args *structs.InterfaceAttachRequest, reply *structs.NetWriteResponse) error {
	if done, err := e.srv.forward("Net.AttachInterface", args, args, reply); done {
		return err
	}
	var portID string
	index, err := e.srv.applyNet(func(state *fsm.StateStore) ([]*structs.NetChange, error) {
		changes, id, err := buildAttachInterface(state, args)
		portID = id
		return changes, err
	})
	if err != nil {
		return err
	}
	reply.Index = index
	state := e.srv.fsm.State()
	p, err := state.PortByID(nil, portID)
	if err != nil || p == nil {
		return err
	}
	return fillNetObjects(state, nil, structs.NetKindPort, []any{p}, &reply.NetObjects)
}

// DetachInterface removes a port from an instance: deleted when it was
// made for the instance, unbound when the user handed it over.
func (e *Net) DetachInterface(args *structs.InterfaceDetachRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Net.DetachInterface", args, args, reply); done {
		return err
	}
	index, err := e.srv.applyNet(func(state *fsm.StateStore) ([]*structs.NetChange, error) {
		p, err := state.PortByID(nil, args.PortID)
		if err != nil {
			return nil, err
		}
		if p == nil || p.DeviceID != args.InstanceID || !p.IsCompute() {
			return nil, structs.NetErrorf(structs.KindNotFound, structs.ErrPortNotFound, "Port %s is not attached", args.PortID)
		}
		if p.PreserveOnDelete {
			c := p.Copy()
			c.DeviceID, c.DeviceOwner, c.PreserveOnDelete, c.DeviceSeq, c.Tag, c.BindingHostID = "", "", false, 0, "", ""
			return []*structs.NetChange{{Op: structs.NetOpUpdate, Kind: structs.NetKindPort, Expect: p.ModifyIndex, Port: c}}, nil
		}
		return []*structs.NetChange{{Op: structs.NetOpDelete, Kind: structs.NetKindPort, ID: p.ID}}, nil
	})
	reply.Index = index
	return err
}
