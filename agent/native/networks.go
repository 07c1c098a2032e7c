package native

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// The native API's networks, subnets and ports. The native API is the
// operator's: it sees and changes every project's objects.

// operator is the native API's caller: an admin of no project.
var operator = structs.NetCaller{Admin: true}

// networkView is a network with its subnets' ids.
type networkView struct {
	*structs.Network
	Subnets []string
}

// portView is a port with its binding.
type portView struct {
	*structs.Port
	BindingHost string
	Status      string
}

// netViews turns listed objects into the native views.
func netViews(kind string, objs *structs.NetObjects) []any {
	out := []any{}
	switch kind {
	case structs.NetKindNetwork:
		for _, n := range objs.Networks {
			subs := objs.SubnetIDs[n.ID]
			if subs == nil {
				subs = []string{}
			}
			out = append(out, &networkView{Network: n, Subnets: subs})
		}
	case structs.NetKindSubnet:
		for _, s := range objs.Subnets {
			out = append(out, s)
		}
	case structs.NetKindPort:
		for _, p := range objs.Ports {
			v := &portView{Port: p, Status: structs.NetStatusDown}
			if b := objs.Bindings[p.ID]; b != nil {
				v.BindingHost, v.Status = b.HostName, b.Status
			}
			out = append(out, v)
		}
	}
	return out
}

func (a *API) netList(kind string) handler {
	return func(w http.ResponseWriter, q *request) (any, error) {
		args := structs.NetListRequest{Kind: kind, Caller: operator, NetworkID: q.URL.Query().Get("network"),
			ProjectID: q.URL.Query().Get("project")}
		if d := q.URL.Query().Get("device"); d != "" {
			args.DeviceIDs = []string{d}
		}
		if err := parseQuery(q, &args.QueryOptions); err != nil {
			return nil, err
		}
		var out structs.NetListResponse
		if err := q.rpc.RPC("Net.List", &args, &out); err != nil {
			return nil, err
		}
		setMeta(w, &out.QueryMeta)
		return netViews(kind, &out.NetObjects), nil
	}
}

// findNet reads an object by id or, when exactly one has it, by name.
func (a *API) findNet(w http.ResponseWriter, q *request, kind string) (*structs.NetObjects, error) {
	ref := q.param("id")
	args := structs.NetGetRequest{Kind: kind, ID: ref, Caller: operator}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.NetListResponse
	err := q.rpc.RPC("Net.Get", &args, &out)
	if err == nil {
		setMeta(w, &out.QueryMeta)
		return &out.NetObjects, nil
	}
	if structs.KindOf(err) != structs.KindNotFound {
		return nil, err
	}
	var list structs.NetListResponse
	if err := q.rpc.RPC("Net.List", &structs.NetListRequest{Kind: kind, Caller: operator, QueryOptions: args.QueryOptions}, &list); err != nil {
		return nil, err
	}
	var ids []string
	for _, v := range netViews(kind, &list.NetObjects) {
		id, name := netName(v)
		if name == ref {
			ids = append(ids, id)
		}
	}
	switch len(ids) {
	case 0:
		return nil, err
	case 1:
		args.ID = ids[0]
		if err := q.rpc.RPC("Net.Get", &args, &out); err != nil {
			return nil, err
		}
		setMeta(w, &out.QueryMeta)
		return &out.NetObjects, nil
	}
	return nil, structs.Errorf(structs.KindInvalid, "%d %ss are named %q; use an id", len(ids), kind, ref)
}

func netName(v any) (string, string) {
	switch x := v.(type) {
	case *networkView:
		return x.ID, x.Name
	case *structs.Subnet:
		return x.ID, x.Name
	case *portView:
		return x.ID, x.Name
	}
	return "", ""
}

func (a *API) netGet(kind string) handler {
	return func(w http.ResponseWriter, q *request) (any, error) {
		objs, err := a.findNet(w, q, kind)
		if err != nil {
			return nil, err
		}
		views := netViews(kind, objs)
		if len(views) == 0 {
			return nil, structs.NetNotFound(kind, q.param("id"))
		}
		return views[0], nil
	}
}

func (a *API) netDelete(kind string) handler {
	return func(w http.ResponseWriter, q *request) (any, error) {
		objs, err := a.findNet(w, q, kind)
		if err != nil {
			return nil, err
		}
		views := netViews(kind, objs)
		if len(views) == 0 {
			return nil, structs.NetNotFound(kind, q.param("id"))
		}
		id, _ := netName(views[0])
		args := structs.NetWriteRequest{Kind: kind, ID: id, Caller: operator}
		var out structs.NetWriteResponse
		if err := q.rpc.RPC("Net.Delete", &args, &out); err != nil {
			return nil, err
		}
		setIndex(w, out.Index)
		return nil, nil
	}
}

// netCreate creates one object and answers its view.
func (a *API) netCreate(w http.ResponseWriter, q *request, args *structs.NetWriteRequest) (any, error) {
	args.Caller = operator
	var out structs.NetWriteResponse
	if err := q.rpc.RPC("Net.Create", args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	views := netViews(args.Kind, &out.NetObjects)
	if len(views) == 0 {
		return nil, structs.Errorf(structs.KindInternal, "the %s was not stored", args.Kind)
	}
	return views[0], nil
}

func (a *API) networkCreate(w http.ResponseWriter, q *request) (any, error) {
	n := structs.Network{AdminStateUp: true, PortSecurityEnabled: true}
	if err := decodeJSON(w, q, &n); err != nil {
		return nil, err
	}
	args := &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Network: &n}
	if n.Shared {
		args.Fields = append(args.Fields, "shared")
	}
	if n.External {
		args.Fields = append(args.Fields, "router:external")
	}
	for f, set := range map[string]bool{"provider:network_type": n.NetworkType != "",
		"provider:physical_network": n.PhysicalNetwork != "", "provider:segmentation_id": n.SegmentationID != 0} {
		if set {
			args.Fields = append(args.Fields, f)
		}
	}
	return a.netCreate(w, q, args)
}

func (a *API) subnetCreate(w http.ResponseWriter, q *request) (any, error) {
	s := structs.Subnet{EnableDHCP: true}
	if err := decodeJSON(w, q, &s); err != nil {
		return nil, err
	}
	if s.IPVersion == 0 {
		s.IPVersion = 4
		if p, err := structs.ParseSubnetCIDR(s.CIDR, 0); err == nil {
			s.IPVersion = structs.IPVersion(p.Addr())
		}
	}
	args := &structs.NetWriteRequest{Kind: structs.NetKindSubnet, Subnet: &s}
	if s.GatewayIP != "" {
		args.Fields = append(args.Fields, "gateway_ip")
	}
	return a.netCreate(w, q, args)
}

func (a *API) portCreate(w http.ResponseWriter, q *request) (any, error) {
	p := structs.Port{AdminStateUp: true}
	if err := decodeJSON(w, q, &p); err != nil {
		return nil, err
	}
	args := &structs.NetWriteRequest{Kind: structs.NetKindPort, Port: &p}
	if len(p.FixedIPs) > 0 {
		args.Fields = append(args.Fields, "fixed_ips")
	}
	if p.MACAddress != "" {
		args.Fields = append(args.Fields, "mac_address")
	}
	return a.netCreate(w, q, args)
}
