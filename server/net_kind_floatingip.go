package server

import (
	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// floatingIPKind serves floating IPs: an address on an external
// network, held by a port of it, associated with one of the caller's
// ports.
var floatingIPKind = netKind{
	create: buildFloatingIPCreate, update: buildFloatingIPUpdate, delete: buildFloatingIPDelete,
	visible: ownedBy(func(f *structs.FloatingIP) string { return f.ProjectID }),
	fill: func(_ *fsm.StateStore, _ memdb.WatchSet, obj any, out *structs.NetObjects) error {
		out.FloatingIPs = append(out.FloatingIPs, obj.(*structs.FloatingIP))
		return nil
	},
	fields: func(obj any) (string, string, string) {
		f := obj.(*structs.FloatingIP)
		return f.ID, f.ProjectID, f.FloatingNetworkID
	},
}

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
