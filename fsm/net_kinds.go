package fsm

import (
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// netKind is what the FSM knows of one networking kind: the memdb table
// its objects live in, the index a list narrows by, the key lists are
// ordered by, and how a change of it is applied. Every per-kind read
// goes through this one table, so a new kind is one entry here.
type netKind struct {
	table string
	// scope is the index a list's scope argument looks up (a network's
	// subnets, a project's routers, a group's rules).
	scope string
	// createKey orders a list: by creation, ties by id.
	createKey func(obj any) (uint64, string)
	apply     func(t *netTxn, c *structs.NetChange) error
}

var netKinds = map[string]netKind{
	structs.NetKindNetwork: {table: TableNetworks, scope: "project", apply: (*netTxn).network,
		createKey: func(o any) (uint64, string) { v := o.(*structs.Network); return v.CreateIndex, v.ID }},
	structs.NetKindSubnet: {table: TableSubnets, scope: "network", apply: (*netTxn).subnet,
		createKey: func(o any) (uint64, string) { v := o.(*structs.Subnet); return v.CreateIndex, v.ID }},
	structs.NetKindPort: {table: TablePorts, scope: "network", apply: (*netTxn).port,
		createKey: func(o any) (uint64, string) { v := o.(*structs.Port); return v.CreateIndex, v.ID }},
	structs.NetKindSecurityGroup: {table: TableSecurityGroups, scope: "project", apply: (*netTxn).securityGroup,
		createKey: func(o any) (uint64, string) { v := o.(*structs.SecurityGroup); return v.CreateIndex, v.ID }},
	structs.NetKindSecurityGroupRule: {table: TableSecurityGroupRules, scope: "group", apply: (*netTxn).rule,
		createKey: func(o any) (uint64, string) { v := o.(*structs.SecurityGroupRule); return v.CreateIndex, v.ID }},
	structs.NetKindFloatingIP: {table: TableFloatingIPs, scope: "project", apply: (*netTxn).floatingIP,
		createKey: func(o any) (uint64, string) { v := o.(*structs.FloatingIP); return v.CreateIndex, v.ID }},
	structs.NetKindRouter: {table: TableRouters, scope: "project", apply: (*netTxn).router,
		createKey: func(o any) (uint64, string) { v := o.(*structs.Router); return v.CreateIndex, v.ID }},
}

func unknownNetKind(kind string) error {
	return structs.Errorf(structs.KindInvalid, "unknown networking kind %q", kind)
}

// netGet reads one object of a kind by id; the zero T (nil) when
// missing. T must be the kind's type (*structs.Network for networks…)
// or any.
func netGet[T any](txn *memdb.Txn, ws memdb.WatchSet, kind, id string) (T, error) {
	k, ok := netKinds[kind]
	if !ok {
		var zero T
		return zero, unknownNetKind(kind)
	}
	return first[T](txn, ws, k.table, "id", id)
}

// netList lists the objects of a kind, oldest first: every one when
// scope is empty, else those the kind's scope index maps scope to.
func netList[T any](txn *memdb.Txn, ws memdb.WatchSet, kind, scope string) ([]T, error) {
	k, ok := netKinds[kind]
	if !ok {
		return nil, unknownNetKind(kind)
	}
	var objs []T
	var err error
	if scope == "" {
		objs, err = list[T](txn, ws, k.table)
	} else {
		objs, err = list[T](txn, ws, k.table, k.scope, scope)
	}
	sortByCreate(objs, func(o T) (uint64, string) { return k.createKey(o) })
	return objs, err
}

// NetObject reads one networking object of a kind (a *structs.Network,
// *structs.Subnet…), nil when missing.
func (s *StateStore) NetObject(ws memdb.WatchSet, kind, id string) (any, error) {
	return netGet[any](s.ReadTxn(), ws, kind, id)
}

// NetObjects lists the networking objects of a kind, oldest first:
// every one when scope is empty, else one scope's: a network's subnets
// or ports, a group's rules, a project's networks, groups, floating IPs
// or routers.
func (s *StateStore) NetObjects(ws memdb.WatchSet, kind, scope string) ([]any, error) {
	return netList[any](s.ReadTxn(), ws, kind, scope)
}
