package nova

import (
	"github.com/stratus-cloud/stratus/internal/route"
)

// Nova's removed APIs: the nova-network, cells v1, XenAPI agent,
// cloudpipe and x509-less console APIs Nova dropped over its releases.
// Nova still routes them, to a handler that checks no policy and
// answers 410 Gone at every microversion (after its empty schema has
// read the body: malformed JSON is a 400), so clients can tell a
// removed API from a path that never existed. Stratus answers them the
// same way. (The removed os-networks calls are in networks_compat.go;
// os-certificates, which Nova also removed, is served by
// certificates.go.)

func (a *API) removedRoutes() []route.Route[handler] {
	get := func(p string) route.Route[handler] {
		return route.Route[handler]{Pattern: "GET " + p, Access: authenticated, Handle: gone}
	}
	del := func(p string) route.Route[handler] {
		return route.Route[handler]{Pattern: "DELETE " + p, Access: authenticated, Handle: gone}
	}
	with := func(method, p string) route.Route[handler] {
		return route.Route[handler]{Pattern: method + " " + p, Access: authenticated, Handle: goneWithBody}
	}
	return []route.Route[handler]{
		// os-agents (XenAPI guest agents), removed in 22.0.0.
		get("/os-agents"), with("POST", "/os-agents"), with("PUT", "/os-agents/{id}"), del("/os-agents/{id}"),
		// os-cells (cells v1), removed in 20.0.0.
		get("/os-cells"), with("POST", "/os-cells"), get("/os-cells/{id}"), with("PUT", "/os-cells/{id}"), del("/os-cells/{id}"),
		get("/os-cells/{id}/capacities"), with("POST", "/os-cells/sync_instances"),
		// os-cloudpipe, removed in 16.0.0.
		get("/os-cloudpipe"), with("POST", "/os-cloudpipe"), with("PUT", "/os-cloudpipe/{id}"),
		// nova-network's fixed IPs, floating IP DNS, bulk floating IPs,
		// fping and default security group rules, removed in 18.0.0.
		get("/os-fixed-ips/{id}"),
		{Pattern: "POST /os-fixed-ips/{id}/action", Access: authenticated, Handle: goneAction("reserve", "unreserve")},
		get("/os-floating-ip-dns"), with("PUT", "/os-floating-ip-dns/{id}"), del("/os-floating-ip-dns/{id}"),
		get("/os-floating-ip-dns/{domain}/entries/{id}"), with("PUT", "/os-floating-ip-dns/{domain}/entries/{id}"),
		del("/os-floating-ip-dns/{domain}/entries/{id}"),
		get("/os-floating-ips-bulk"), with("POST", "/os-floating-ips-bulk"), get("/os-floating-ips-bulk/{id}"),
		with("PUT", "/os-floating-ips-bulk/{id}"),
		get("/os-fping"), get("/os-fping/{id}"),
		get("/os-security-group-default-rules"), with("POST", "/os-security-group-default-rules"),
		get("/os-security-group-default-rules/{id}"), del("/os-security-group-default-rules/{id}"),
		// The XVP console API of /servers/{id}/consoles, removed in 21.0.0.
		get("/servers/{id}/consoles"), with("POST", "/servers/{id}/consoles"), get("/servers/{id}/consoles/{console}"),
		del("/servers/{id}/consoles/{console}"),
		// os-virtual-interfaces, removed in 18.0.0.
		get("/servers/{id}/os-virtual-interfaces"),
	}
}

// goneAction answers a removed API's POST …/action: Nova peeks at the
// action first (one key, else a malformed body; an unknown one is "There
// is no such action"), then the removed handler answers 410.
func goneAction(names ...string) handler {
	return func(q *request) (*reply, error) {
		body, err := decodeBody(q, anyBody)
		if err != nil {
			return nil, err
		}
		if len(body) != 1 {
			return nil, badRequest("Malformed request body")
		}
		for name := range body {
			if !containsString(names, name) {
				return nil, badRequest("There is no such action: %s", name)
			}
		}
		return gone(q)
	}
}
