package nova

import (
	"net/http"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// os-networks and os-tenant-networks: Nova's proxies to the network
// service, until 2.35 (proxyMax). With Neutron, Nova shows a network's
// id and name and nothing else of nova-network's thirty fields; the
// nova-network calls (create, add, delete, the association actions)
// were removed in Nova 21.0.0 and answer 410 Gone at every
// microversion, without a policy check, as Nova's removed handlers do.

const (
	networkRule       = "os_compute_api:os-networks:"
	tenantNetworkRule = "os_compute_api:os-tenant-networks:"
)

// authenticated admits any verified token: Nova's removed handlers
// check no policy.
const authenticated = policy.Authenticated

func (a *API) networkCompatRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /os-networks", MaxVersion: proxyMax, Access: reader, Policy: networkRule + "list", Handle: a.networkList},
		{Pattern: "GET /os-networks/{id}", MaxVersion: proxyMax, Access: reader, Policy: networkRule + "show", Handle: a.networkShow},
		{Pattern: "POST /os-networks", Access: authenticated, Handle: goneWithBody},
		{Pattern: "POST /os-networks/add", Access: authenticated, Handle: goneWithBody},
		{Pattern: "DELETE /os-networks/{id}", Access: authenticated, Handle: gone},
		{Pattern: "POST /os-networks/{id}/action", Access: authenticated, Handle: networkAction},
		{Pattern: "GET /os-tenant-networks", MaxVersion: proxyMax, Access: reader, Policy: tenantNetworkRule + "list", Handle: a.tenantNetworkList},
		{Pattern: "GET /os-tenant-networks/{id}", MaxVersion: proxyMax, Access: reader, Policy: tenantNetworkRule + "show", Handle: a.tenantNetworkShow},
		{Pattern: "POST /os-tenant-networks", Access: authenticated, Handle: goneWithBody},
		{Pattern: "DELETE /os-tenant-networks/{id}", Access: authenticated, Handle: gone},
	}
}

// msgGone is webob's HTTPGone explanation, which Nova's removed APIs
// answer with (a computeFault: Nova names no 410).
const msgGone = "This resource is no longer available.  No forwarding address is given."

func gone(*request) (*reply, error) { return nil, faultf(http.StatusGone, msgGone) }

// anyJSON accepts any JSON body, or none: the removed APIs' schemas
// are empty.
var anyJSON = &schema{open: true}

// goneWithBody answers a removed API that takes a body: malformed JSON
// is still Nova's 400.
func goneWithBody(q *request) (*reply, error) {
	if _, err := decodeBody(q, anyJSON); err != nil {
		return nil, err
	}
	return gone(q)
}

// networkActions are the nova-network actions of POST
// /os-networks/{id}/action, all removed.
var networkAction = goneAction("disassociate", "disassociate_host", "disassociate_project", "associate_host")

// networks lists the networks the caller may see, as Neutron lists them
// for the caller's token (Nova's network_api.get_all).
func (q *request) networks() ([]*structs.Network, error) {
	var out structs.NetListResponse
	if err := q.call("Net.List", &structs.NetListRequest{Kind: structs.NetKindNetwork, Caller: q.netCaller()}, &out); err != nil {
		return nil, err
	}
	return out.Networks, nil
}

// network reads one network the caller may see; any failure to find it
// is Nova's "Network not found".
func (q *request) network(id string) (*structs.Network, error) {
	var out structs.NetListResponse
	err := q.call("Net.Get", &structs.NetGetRequest{Kind: structs.NetKindNetwork, ID: id, Caller: q.netCaller()}, &out)
	if err != nil && structs.KindOf(err) != structs.KindNotFound {
		return nil, err
	}
	if len(out.Networks) == 0 {
		return nil, notFound("Network not found")
	}
	return out.Networks[0], nil
}

// novaNetworkFields are the fields of os-networks' view; admins see
// novaNetworkAdminFields too. With Neutron all are null but id and
// label.
var (
	novaNetworkFields      = []string{"id", "cidr", "netmask", "gateway", "broadcast", "dns1", "dns2", "cidr_v6", "gateway_v6", "label", "netmask_v6"}
	novaNetworkAdminFields = []string{"created_at", "updated_at", "deleted_at", "deleted", "injected", "bridge", "vlan",
		"vpn_public_address", "vpn_public_port", "vpn_private_address", "dhcp_start", "project_id", "host",
		"bridge_interface", "multi_host", "priority", "rxtx_base", "mtu", "dhcp_server", "enable_dhcp", "share_address"}
)

// networkView is Nova's network_dict of os-networks.
func (q *request) networkView(n *structs.Network) map[string]any {
	v := map[string]any{}
	fields := novaNetworkFields
	if q.isAdmin() {
		fields = append(append([]string(nil), fields...), novaNetworkAdminFields...)
	}
	for _, f := range fields {
		v[f] = nil
	}
	v["id"], v["label"] = n.ID, n.Name
	return v
}

// tenantNetworkView is os-tenant-networks' network_dict: the cidr is
// the string "None", as Nova has always answered with Neutron.
func tenantNetworkView(n *structs.Network) map[string]any {
	return map[string]any{"id": n.ID, "cidr": "None", "label": n.Name}
}

func (a *API) networkList(q *request) (*reply, error) {
	nets, err := q.networks()
	if err != nil {
		return nil, err
	}
	views := make([]any, 0, len(nets))
	for _, n := range nets {
		views = append(views, q.networkView(n))
	}
	return okReply(map[string]any{"networks": views})
}

func (a *API) networkShow(q *request) (*reply, error) {
	n, err := q.network(q.param("id"))
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"network": q.networkView(n)})
}

// tenantNetworkList answers GET /os-tenant-networks: the caller's
// networks (Nova's use_neutron_default_nets, off by default, adds no
// others).
func (a *API) tenantNetworkList(q *request) (*reply, error) {
	nets, err := q.networks()
	if err != nil {
		return nil, err
	}
	views := make([]any, 0, len(nets))
	for _, n := range nets {
		views = append(views, tenantNetworkView(n))
	}
	return okReply(map[string]any{"networks": views})
}

func (a *API) tenantNetworkShow(q *request) (*reply, error) {
	n, err := q.network(q.param("id"))
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"network": tenantNetworkView(n)})
}
