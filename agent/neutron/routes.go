package neutron

import (
	"errors"
	"net/http"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// handler answers one routed request.
type handler func(q *request) (*reply, error)

// routes is every route of the API under MountPath with who may call
// it. Version discovery is public; everything else needs a
// project-scoped token, and the servers apply Neutron's per-object
// policy to the caller each request names.
func (a *API) routes() []route.Route[handler] {
	rs := []route.Route[handler]{
		{Pattern: "GET /", Access: policy.Public, Handle: a.versions},
		{Pattern: "GET /v2.0", Access: policy.Public, Handle: a.versionIndex},
		{Pattern: "GET /v2.0/extensions", Access: policy.Anyone, Handle: a.extensionList},
		{Pattern: "GET /v2.0/extensions/{alias}", Access: policy.Anyone, Handle: a.extensionShow},
	}
	for _, res := range resources {
		rs = append(rs,
			route.Route[handler]{Pattern: "GET /v2.0/" + res.path, Access: policy.Anyone, Handle: func(q *request) (*reply, error) { return a.list(q, res) }},
			route.Route[handler]{Pattern: "POST /v2.0/" + res.path, Access: policy.Anyone, Handle: func(q *request) (*reply, error) { return a.create(q, res) }},
			route.Route[handler]{Pattern: "GET /v2.0/" + res.path + "/{id}", Access: policy.Anyone, Handle: func(q *request) (*reply, error) { return a.show(q, res) }},
			route.Route[handler]{Pattern: "PUT /v2.0/" + res.path + "/{id}", Access: policy.Anyone, Handle: func(q *request) (*reply, error) { return a.update(q, res) }},
			route.Route[handler]{Pattern: "DELETE /v2.0/" + res.path + "/{id}", Access: policy.Anyone, Handle: func(q *request) (*reply, error) { return a.remove(q, res) }},
		)
	}
	return append(rs,
		route.Route[handler]{Pattern: "PUT /v2.0/routers/{id}/add_router_interface", Access: policy.Anyone, Handle: a.addRouterInterface},
		route.Route[handler]{Pattern: "PUT /v2.0/routers/{id}/remove_router_interface", Access: policy.Anyone, Handle: a.removeRouterInterface},
		// Listing every project's quotas is Neutron's admin-only
		// get_quota; one project's quotas the servers check.
		route.Route[handler]{Pattern: "GET /v2.0/quotas", Access: policy.Admin, Policy: "get_quota", Handle: a.quotaList},
		route.Route[handler]{Pattern: "GET /v2.0/quotas/{project}", Access: policy.Anyone, Handle: a.quotaShow},
		route.Route[handler]{Pattern: "GET /v2.0/quotas/{project}/details", Access: policy.Anyone, Handle: a.quotaDetails},
		route.Route[handler]{Pattern: "GET /v2.0/quotas/{project}/default", Access: policy.Anyone, Handle: a.quotaDefault},
		route.Route[handler]{Pattern: "PUT /v2.0/quotas/{project}", Access: policy.Anyone, Handle: a.quotaUpdate},
		route.Route[handler]{Pattern: "DELETE /v2.0/quotas/{project}", Access: policy.Anyone, Handle: a.quotaDelete},
		route.Route[handler]{Pattern: "GET /v2.0/auto-allocated-topology/{project}", Access: policy.Anyone, Handle: a.autoTopologyShow},
		route.Route[handler]{Pattern: "DELETE /v2.0/auto-allocated-topology/{project}", Access: policy.Anyone, Handle: a.autoTopologyDelete},
		route.Route[handler]{Pattern: "GET /v2.0/availability_zones", Access: policy.Anyone, Handle: a.zoneList},
	)
}

// dispatch routes a request: the path under MountPath, a ".json"
// suffix ignored as Neutron ignores it. Segments are matched escaped
// and parameters unescaped once matched.
func (a *API) dispatch(q *request) (*reply, error) {
	raw := q.r.URL.EscapedPath()
	if !strings.HasPrefix(raw, MountPath) {
		return nil, errNotFound()
	}
	path := route.Split(strings.TrimPrefix(raw, MountPath))
	if n := len(path); n > 0 {
		path[n-1] = strings.TrimSuffix(path[n-1], ".json")
	}
	// Neutron declares no HEAD route: HEAD is GET throughout.
	m, err := a.table.Match(route.Request{Method: q.r.Method, Path: path, Ctx: q.r.Context()})
	var na *route.MethodNotAllowedError
	switch {
	case errors.As(err, &na):
		q.w.Header().Set("Allow", na.AllowHeader())
		return nil, apiErrorf(http.StatusMethodNotAllowed, "HTTPMethodNotAllowed", "The method %s is not allowed for this resource.", q.r.Method)
	case err != nil:
		return nil, errNotFound()
	}
	q.params = m.Params
	if err := q.authorize(m.Route); err != nil {
		return nil, err
	}
	return m.Route.Handle(q)
}

// authorize verifies the caller's token and applies the route's access
// level. A public route still reads a valid token when one comes (the
// views then know the caller) and ignores one that is not.
func (q *request) authorize(rt *route.Route[handler]) error {
	if rt.Access == policy.Public {
		if q.r.Header.Get("X-Auth-Token") != "" && q.authenticate() != nil {
			q.token = nil
		}
		return nil
	}
	if err := q.authenticate(); err != nil {
		return err
	}
	if !rt.Access.Allows(q.subject()) {
		return apiErrorf(http.StatusForbidden, structs.ErrPolicyNotAuthorized, "(rule:%s) is disallowed by policy", rt.Policy)
	}
	return nil
}

// subject is the caller as policy sees it.
func (q *request) subject() *policy.Subject {
	return &policy.Subject{UserID: q.token.UserID, ProjectID: q.token.ProjectID, Roles: q.token.Roles}
}

// errNotFound is Neutron's 404 for a path no route has.
func errNotFound() error {
	return apiErrorf(http.StatusNotFound, "HTTPNotFound", "The resource could not be found.")
}
