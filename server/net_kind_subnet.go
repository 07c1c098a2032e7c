package server

import (
	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// subnetKind serves subnets: made on a network the caller owns, seen
// with their network, listed per network.
var subnetKind = netKind{
	create: buildSubnetCreate, update: buildSubnetUpdate, delete: buildSubnetDelete,
	visible: func(state *fsm.StateStore, c structs.NetCaller, obj any) bool {
		return seesSubnet(state, c, obj.(*structs.Subnet))
	},
	fill: func(_ *fsm.StateStore, _ memdb.WatchSet, obj any, out *structs.NetObjects) error {
		out.Subnets = append(out.Subnets, obj.(*structs.Subnet))
		return nil
	},
	fields: func(obj any) (string, string, string) {
		s := obj.(*structs.Subnet)
		return s.ID, s.ProjectID, s.NetworkID
	},
	list: func(state *fsm.StateStore, ws memdb.WatchSet, a *structs.NetListRequest) ([]any, error) {
		return state.NetObjects(ws, structs.NetKindSubnet, a.NetworkID)
	},
}

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
