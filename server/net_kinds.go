package server

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// netKind is what the Net endpoint does for one networking kind. The
// builders turn one Net.Create, Net.Update or Net.Delete into the
// changes of a NetApplyEntry, after Neutron's policy. They read the
// state the entry is decided on; the FSM checks again what a concurrent
// entry could change. Each returns the changes and the id of the object
// the caller asked about. The other functions serve reads; obj is
// always of the kind's type (*structs.Network for networks…).
type netKind struct {
	create, update, delete netBuilder
	// visible reports whether the caller may see an object.
	visible func(state *fsm.StateStore, c structs.NetCaller, obj any) bool
	// fill puts an object into out with what its view needs
	// (networks' subnets, ports' bindings, groups' rules).
	fill func(state *fsm.StateStore, ws memdb.WatchSet, obj any, out *structs.NetObjects) error
	// fields are an object's id, project and network ("" when it has
	// none), for narrowing lists.
	fields func(obj any) (id, project, network string)
	// list reads the objects a list asks for, before visibility and
	// narrowing; nil reads every object of the kind.
	list func(state *fsm.StateStore, ws memdb.WatchSet, a *structs.NetListRequest) ([]any, error)
}

type netBuilder func(*fsm.StateStore, *structs.NetWriteRequest) ([]*structs.NetChange, string, error)

// netKinds is every networking kind the Net endpoint serves; each kind's
// entry lives in its net_kind_<kind>.go.
var netKinds = map[string]netKind{
	structs.NetKindNetwork:           networkKind,
	structs.NetKindSubnet:            subnetKind,
	structs.NetKindPort:              portKind,
	structs.NetKindSecurityGroup:     securityGroupKind,
	structs.NetKindSecurityGroupRule: securityGroupRuleKind,
	structs.NetKindFloatingIP:        floatingIPKind,
	structs.NetKindRouter:            routerKind,
}

// lookupNetKind returns a kind's entry, or the error for an unknown one.
func lookupNetKind(kind string) (netKind, error) {
	k, ok := netKinds[kind]
	if !ok {
		return netKind{}, unknownKind(kind)
	}
	return k, nil
}

func unknownKind(kind string) error {
	return structs.Errorf(structs.KindInvalid, "unknown networking kind %q", kind)
}

func readOnly(attr string) error {
	return structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Cannot update read-only attribute %s", attr)
}

// ownedBy is the visibility of the kinds only their project sees.
func ownedBy[T any](project func(T) string) func(*fsm.StateStore, structs.NetCaller, any) bool {
	return func(_ *fsm.StateStore, c structs.NetCaller, obj any) bool { return owns(c, project(obj.(T))) }
}

// netObject reads one object of a kind, nil when missing.
func netObject(state *fsm.StateStore, kind, id string) (any, error) {
	if _, err := lookupNetKind(kind); err != nil {
		return nil, err
	}
	return state.NetObject(nil, kind, id)
}

// fillNetObjects puts objects of a kind into out with what their views
// need.
func fillNetObjects(state *fsm.StateStore, ws memdb.WatchSet, kind string, objs []any, out *structs.NetObjects) error {
	k, err := lookupNetKind(kind)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := k.fill(state, ws, obj, out); err != nil {
			return err
		}
	}
	return nil
}

// listNet reads the objects a list asks for, visible to its caller.
func listNet(state *fsm.StateStore, ws memdb.WatchSet, a *structs.NetListRequest) ([]any, error) {
	k, err := lookupNetKind(a.Kind)
	if err != nil {
		return nil, err
	}
	var all []any
	if k.list != nil {
		all, err = k.list(state, ws, a)
	} else {
		all, err = state.NetObjects(ws, a.Kind, "")
	}
	if err != nil {
		return nil, err
	}
	var objs []any
	for _, obj := range all {
		if k.visible(state, a.Caller, obj) {
			objs = append(objs, obj)
		}
	}
	return narrow(k, objs, a), nil
}

// narrow keeps the objects a list's ids, network and project name.
func narrow(k netKind, objs []any, a *structs.NetListRequest) []any {
	if len(a.IDs) == 0 && a.ProjectID == "" && a.NetworkID == "" {
		return objs
	}
	ids := map[string]bool{}
	for _, id := range a.IDs {
		ids[id] = true
	}
	out := objs[:0]
	for _, obj := range objs {
		id, project, network := k.fields(obj)
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

// anys converts a typed list into the []any the kinds' reads share.
func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
