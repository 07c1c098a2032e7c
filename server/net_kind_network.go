package server

import (
	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// networkKind serves networks: only admins set sharing, external and
// provider attributes; a network is seen by its project, or by all when
// shared or external.
var networkKind = netKind{
	create: buildNetworkCreate, update: buildNetworkUpdate, delete: buildNetworkDelete,
	visible: func(_ *fsm.StateStore, c structs.NetCaller, obj any) bool {
		return seesNetwork(c, obj.(*structs.Network))
	},
	fill: fillNetwork,
	fields: func(obj any) (string, string, string) {
		n := obj.(*structs.Network)
		return n.ID, n.ProjectID, n.ID
	},
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
			"provider:physical_network", "provider:segmentation_id", "segments"} {
			if a.Has(f) {
				return nil, "", policyError("create_network:" + f)
			}
		}
		// A segment in the body is refused whether or not the edge
		// listed it among the fields: only the FSM picks a member's.
		if f := providerSet(n); f != "" {
			return nil, "", policyError("create_network:" + f)
		}
	}
	n.ID, n.AutoAllocated = uuid.NewString(), false
	if err := n.Validate(); err != nil {
		return nil, "", err
	}
	if err := checkProvider(n); err != nil {
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

// fillNetwork adds a network and the ids of its subnets.
func fillNetwork(state *fsm.StateStore, ws memdb.WatchSet, obj any, out *structs.NetObjects) error {
	n := obj.(*structs.Network)
	out.Networks = append(out.Networks, n)
	subs, err := state.Subnets(ws, n.ID)
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
	out.SubnetIDs[n.ID] = ids
	return nil
}
