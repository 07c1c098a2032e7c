package neutron

import "net/http"

// versions answers GET /network: Neutron's one version, v2.0.
func (a *API) versions(q *request) (*reply, error) {
	return okReply(map[string]any{"versions": []any{map[string]any{
		"id": "v2.0", "status": "CURRENT",
		"links": []any{map[string]any{"href": q.base() + "/v2.0/", "rel": "self"}},
	}}})
}

// versionIndex answers GET /network/v2.0: the resources it serves.
func (a *API) versionIndex(q *request) (*reply, error) {
	var out []any
	for _, res := range resources {
		out = append(out, map[string]any{"name": res.singular, "collection": res.plural,
			"links": []any{map[string]any{"href": q.base() + "/v2.0/" + res.path, "rel": "self"}}})
	}
	return okReply(map[string]any{"resources": out})
}

// extension is one API extension Stratus implements.
type extension struct{ alias, name, description string }

// extensions are the extensions whose attributes and resources Stratus
// serves; clients check them before using a feature.
var extensions = []extension{
	{"allowed-address-pairs", "Allowed Address Pairs", "Provides allowed address pairs"},
	{"auto-allocated-topology", "Auto Allocated Topology Services", "Auto Allocated Topology Services."},
	{"availability_zone", "Availability Zone", "The availability zone extension."},
	{"binding", "Port Binding", "Expose port bindings of a virtual port to external application"},
	{"external-net", "Neutron external network", "Adds external network attribute to network resource."},
	{"ext-gw-mode", "Neutron L3 Configurable external gateway mode", "Extension of the router abstraction for specifying whether SNAT should occur on the external gateway"},
	{"extraroute", "Neutron Extra Route", "Extra routes configuration for L3 router"},
	{"filter-validation", "Filter parameters validation", "Provides validation on filter parameters."},
	{"multi-provider", "Multi Provider Network", "Expose mapping of virtual networks to multiple physical networks"},
	{"net-mtu", "Network MTU", "Provides MTU attribute for a network resource."},
	{"network_availability_zone", "Network Availability Zone", "Availability zone support for network."},
	{"pagination", "Pagination support", "Extension that indicates that pagination is enabled."},
	{"port-security", "Port Security", "Provides port security"},
	{"project-id", "project_id field enabled", "Extension that indicates that project_id field is enabled."},
	{"provider", "Provider Network", "Expose mapping of virtual networks to physical networks"},
	{"quotas", "Quota management support", "Expose functions for quotas management per project"},
	{"quota_details", "Quota details management support", "Expose functions for quotas usage statistics per project"},
	{"router", "Neutron L3 Router", "Router abstraction for basic L3 forwarding between L2 Neutron networks and access to external networks via a NAT gateway."},
	{"router_availability_zone", "Router Availability Zone", "Availability zone support for router."},
	{"security-group", "security-group", "The security groups extension."},
	{"sorting", "Sorting support", "Extension that indicates that sorting is enabled."},
	{"standard-attr-description", "standard-attr-description", "Extension to add descriptions to standard attributes"},
	{"standard-attr-revisions", "Resource revision numbers", "This extension will display the revision number of neutron resources."},
	{"standard-attr-timestamp", "Resource timestamps", "Adds created_at and updated_at fields to all Neutron resources that have Neutron standard attributes."},
	{"stateful-security-group", "Stateful security group", "Indicates if the security group is stateful or not"},
}

func (e extension) view() map[string]any {
	return map[string]any{"alias": e.alias, "name": e.name, "description": e.description,
		"updated": "2013-01-01T10:00:00-00:00", "links": []any{}}
}

func (a *API) extensionList(q *request) (*reply, error) {
	out := make([]any, 0, len(extensions))
	for _, e := range extensions {
		out = append(out, e.view())
	}
	return okReply(map[string]any{"extensions": out})
}

func (a *API) extensionShow(q *request) (*reply, error) {
	for _, e := range extensions {
		if e.alias == q.param("alias") {
			return okReply(map[string]any{"extension": e.view()})
		}
	}
	return nil, apiErrorf(http.StatusNotFound, "HTTPNotFound", "Extension with alias %s does not exist", q.param("alias"))
}

// zoneList answers GET /v2.0/availability_zones: the one zone networks
// and routers are in.
func (a *API) zoneList(q *request) (*reply, error) {
	return okReply(map[string]any{"availability_zones": []any{
		map[string]any{"name": "nova", "resource": "network", "state": "available"},
		map[string]any{"name": "nova", "resource": "router", "state": "available"},
	}})
}
