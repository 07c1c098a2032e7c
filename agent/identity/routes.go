package identity

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
)

// MountPath is where the agent serves the API; the catalog's identity
// endpoint is <agent>/identity.
const MountPath = "/identity"

// handler answers a status and a body to encode as JSON (nil for none),
// or an error to answer Keystone's way.
type handler func(w http.ResponseWriter, r *http.Request) (int, any, error)

// routes is every route of the API under MountPath with who may call
// it. Discovery and issuing a token are public. Keystone's admin rules
// are policy.Admin: only a project-scoped token carries roles, so the
// admin role is an admin of a project. Routes open to any verified
// token let a user act on itself; their handlers check the rest (its
// own user, its own token, or an admin).
func (s *Service) routes() []route.Route[handler] {
	const self = policy.Authenticated
	admin := func(pattern, rule string, h handler) route.Route[handler] {
		return route.Route[handler]{Pattern: pattern, Access: policy.Admin, Policy: "identity:" + rule, Handle: h}
	}
	return []route.Route[handler]{
		{Pattern: "GET /", Access: policy.Public, Handle: s.versions},
		{Pattern: "GET /v3", Access: policy.Public, Handle: s.version},
		{Pattern: "POST /v3/auth/tokens", Access: policy.Public, Handle: s.issueToken},
		// GET answers HEAD too (the kit's rule), as Keystone's HEAD
		// validates a token without a body.
		{Pattern: "GET /v3/auth/tokens", Access: self, Handle: s.validateToken},
		{Pattern: "DELETE /v3/auth/tokens", Access: self, Handle: s.revokeToken},
		{Pattern: "GET /v3/auth/catalog", Access: self, Handle: s.authCatalog},
		{Pattern: "GET /v3/auth/projects", Access: self, Handle: s.authProjects},

		admin("GET /v3/projects", "list_projects", s.projectList),
		admin("POST /v3/projects", "create_project", s.projectCreate),
		admin("GET /v3/projects/{id}", "get_project", s.projectGet),
		admin("PATCH /v3/projects/{id}", "update_project", s.projectUpdate),
		admin("DELETE /v3/projects/{id}", "delete_project", s.projectDelete),

		admin("GET /v3/users", "list_users", s.userList),
		admin("POST /v3/users", "create_user", s.userCreate),
		{Pattern: "GET /v3/users/{id}", Access: self, Handle: s.userGet},
		admin("PATCH /v3/users/{id}", "update_user", s.userUpdate),
		admin("DELETE /v3/users/{id}", "delete_user", s.userDelete),
		{Pattern: "POST /v3/users/{id}/password", Access: self, Handle: s.userPassword},
		{Pattern: "GET /v3/users/{id}/projects", Access: self, Handle: s.userProjects},
		{Pattern: "GET /v3/users/{id}/credentials/OS-EC2", Access: self, Handle: s.ec2List},
		{Pattern: "POST /v3/users/{id}/credentials/OS-EC2", Access: self, Handle: s.ec2Create},
		{Pattern: "GET /v3/users/{id}/credentials/OS-EC2/{access}", Access: self, Handle: s.ec2Get},
		{Pattern: "DELETE /v3/users/{id}/credentials/OS-EC2/{access}", Access: self, Handle: s.ec2Delete},
		// Application credentials (app_credentials.go): a user's own,
		// or anyone's for an admin.
		{Pattern: "GET /v3/users/{id}/application_credentials", Access: self, Handle: s.appCredList},
		{Pattern: "POST /v3/users/{id}/application_credentials", Access: self, Handle: s.appCredCreate},
		{Pattern: "GET /v3/users/{id}/application_credentials/{cred}", Access: self, Handle: s.appCredGet},
		{Pattern: "DELETE /v3/users/{id}/application_credentials/{cred}", Access: self, Handle: s.appCredDelete},

		admin("GET /v3/roles", "list_roles", s.roleList),
		admin("POST /v3/roles", "create_role", s.roleCreate),
		admin("GET /v3/roles/{id}", "get_role", s.roleGet),
		admin("DELETE /v3/roles/{id}", "delete_role", s.roleDelete),
		admin("GET /v3/projects/{project}/users/{user}/roles", "list_grants", s.grantList),
		admin("PUT /v3/projects/{project}/users/{user}/roles/{role}", "create_grant", s.grantCreate),
		admin("GET /v3/projects/{project}/users/{user}/roles/{role}", "check_grant", s.grantCheck),
		admin("DELETE /v3/projects/{project}/users/{user}/roles/{role}", "revoke_grant", s.grantDelete),
		admin("GET /v3/role_assignments", "list_role_assignments", s.assignmentList),
		// The catalog, read-only (catalog.go): services and endpoints are
		// Keystone's admin reads, regions any token's.
		admin("GET /v3/services", "list_services", s.serviceList),
		admin("GET /v3/services/{id}", "get_service", s.serviceGet),
		admin("GET /v3/endpoints", "list_endpoints", s.endpointList),
		admin("GET /v3/endpoints/{id}", "get_endpoint", s.endpointGet),
		{Pattern: "GET /v3/regions", Access: self, Handle: s.regionList},
		{Pattern: "GET /v3/regions/{id}", Access: self, Handle: s.regionGet},
		admin("GET /v3/domains", "list_domains", s.domainList),
		admin("GET /v3/domains/{id}", "get_domain", s.domainGet),
	}
}

// Handler returns the API's HTTP handler, to mount at MountPath and
// under it.
func (s *Service) Handler() http.Handler { return s.wrap(s.dispatch) }

// slashRoots are the only paths a trailing slash may end: the version
// documents. Anywhere else it is a path no route has.
var slashRoots = map[string]bool{"": true, "v3": true}

// dispatch routes a request under MountPath: segments match however the
// client escaped them, and parameters are unescaped once matched. It
// verifies the caller's token for every route but the public ones and
// applies the route's access level before the handler runs.
func (s *Service) dispatch(w http.ResponseWriter, r *http.Request) (int, any, error) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), MountPath)
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		return 0, nil, errNoRoute()
	}
	path := route.SplitCanonical(rest)
	if strings.HasSuffix(rest, "/") && !slashRoots[strings.Join(path, "/")] {
		return 0, nil, errNoRoute()
	}
	m, err := s.table.Match(route.Request{Method: r.Method, Path: path, Ctx: r.Context()})
	var na *route.MethodNotAllowedError
	switch {
	case errors.As(err, &na):
		w.Header().Set("Allow", allowHeader(na.Allow))
		return 0, nil, &apiError{code: http.StatusMethodNotAllowed, msg: "The method is not allowed for the requested URL."}
	case err != nil:
		return 0, nil, errNoRoute()
	}
	for name, v := range m.Params {
		r.SetPathValue(name, v)
	}
	if m.Route.Access != policy.Public {
		t, err := s.authenticated(r)
		if err != nil {
			return 0, nil, err
		}
		if !m.Route.Access.Allows(&policy.Subject{UserID: t.UserID, ProjectID: t.ProjectID, Roles: t.Roles}) {
			return 0, nil, errForbiddenRule(m.Route.Policy)
		}
		route.ObserveCaller(r.Context(), t.UserID, t.ProjectID)
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, t))
	}
	return m.Route.Handle(w, r)
}

// allowOrder is the order of the methods in an Allow header, as the
// Identity API has always listed them; a path with GET also has HEAD.
var allowOrder = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}

func allowHeader(methods []string) string {
	out := slices.Clone(methods)
	if slices.Contains(out, "GET") && !slices.Contains(out, "HEAD") {
		out = append(out, "HEAD")
	}
	slices.SortStableFunc(out, func(a, b string) int { return slices.Index(allowOrder, a) - slices.Index(allowOrder, b) })
	return strings.Join(out, ", ")
}

// errNoRoute is the 404 of a path no route has.
func errNoRoute() error {
	return &apiError{code: http.StatusNotFound, msg: "The resource could not be found."}
}

// callerKey keys the verified token dispatch put in a request's context.
type callerKey struct{}
