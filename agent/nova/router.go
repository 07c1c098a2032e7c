package nova

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
)

// access is who a route's default policy admits, as Nova's defaults
// (project-scoped reader, member, admin); the levels are policy's, shared
// with the native API.
type access = policy.Access

const (
	// anyone admits any project-scoped token ("@" rules).
	anyone = policy.Anyone
	// reader admits the project's readers, members and admins.
	reader = policy.Reader
	// member admits the project's members and admins.
	member = policy.Member
	// admin admits admins only.
	admin = policy.Admin
)

// handler answers one routed request. Each resource file declares its
// routes as route.Route[handler] in a ...Routes method; New compiles
// them into one route.Table.
type handler func(*request) (*reply, error)

// reply is a handler's answer.
type reply struct {
	status int
	body   any
	header http.Header
}

func okReply(body any) (*reply, error) { return &reply{status: http.StatusOK, body: body}, nil }
func acceptedReply(body any) (*reply, error) {
	return &reply{status: http.StatusAccepted, body: body}, nil
}
func noContent() (*reply, error) { return &reply{status: http.StatusNoContent}, nil }

// routeTable compiles every resource's routes. The tables are source:
// a mistake in them (a duplicate, a route without an access level) is a
// programming error, and MustTable panics at New.
func (a *API) routeTable() *route.Table[handler] {
	return route.MustTable(
		a.flavorRoutes(), a.extraSpecRoutes(), a.serverRoutes(), a.serverActionRoutes(),
		a.metadataRoutes(), a.tagRoutes(), a.keypairRoutes(), a.limitRoutes(), a.quotaRoutes(), a.zoneRoutes(),
		a.hypervisorRoutes(), a.serviceRoutes(), a.aggregateRoutes(), a.serverGroupRoutes(), a.usageRoutes(), a.interfaceRoutes(), a.floatingIPRoutes(), a.securityGroupRoutes(),
		a.imageRoutes(), a.serverPasswordRoutes(), a.consoleRoutes(), a.diagnosticsRoutes(), a.certificateRoutes(),
		a.hostRoutes(), a.networkCompatRoutes(), a.usageAuditRoutes(), a.externalEventRoutes(), a.extensionRoutes(), a.topologyRoutes(), a.shareRoutes(), a.volumeProxyRoutes(), a.removedRoutes(),
		a.volumeAttachmentRoutes(),
	)
}

// dispatch answers one request: version discovery without a token,
// everything else under /v2.1, or Nova's legacy /v2, with one.
func (a *API) dispatch(q *request) (*reply, error) {
	path := route.Split(strings.TrimPrefix(q.r.URL.EscapedPath(), MountPath))
	mv, verr := negotiate(q.r.Header)
	if q.legacy = len(path) > 0 && path[0] == v20Path; q.legacy {
		// Nova's legacy v2 API is v2.1 at 2.1: it ignores microversion
		// headers and answers none.
		mv, verr = minMicroversion, nil
	}
	if verr == nil {
		q.mv = mv
		if !q.legacy {
			setVersionHeaders(q.w.Header(), mv)
		}
	}
	switch {
	case len(path) == 0:
		if q.r.Method != http.MethodGet && q.r.Method != http.MethodHead {
			return nil, q.notAllowed("GET")
		}
		return a.versionsIndex(q)
	case path[0] != "v2.1" && !q.legacy:
		return nil, notFound(msgNotFound)
	case len(path) == 1:
		if q.r.Method != http.MethodGet && q.r.Method != http.MethodHead {
			return nil, q.notAllowed("GET")
		}
		return a.versionShow(q, path[0])
	}
	// Authentication comes before routing: without a valid token every
	// path, even one no route has, is a 401.
	if err := q.authenticate(); err != nil {
		return nil, err
	}
	if verr != nil {
		return nil, verr
	}
	path = path[1:]
	// A first segment no route starts with, followed by one a route does,
	// is Nova's optional project id: /v2.1/{project_id}/servers.
	if len(path) > 1 && !a.table.HasFirst(path[0]) && a.table.HasFirst(path[1]) {
		project, err := url.PathUnescape(path[0])
		if err != nil || project != q.token.ProjectID {
			return nil, badRequest("Malformed request URL: URL's project_id '%s' doesn't match Context's project_id '%s'", project, q.token.ProjectID)
		}
		q.project, path = project, path[1:]
	}
	m, err := a.match(q, path)
	if err != nil {
		return nil, err
	}
	if err := q.authorize(m.Route.Access, m.Route.Policy); err != nil {
		return nil, err
	}
	q.params = m.Params
	return m.Route.Handle(q)
}

// match finds the route for the request's method, path and version:
// 404 when no path matches (or not at this version, or the path ends in
// an empty id), 405 with the methods allowed when only other methods do.
func (a *API) match(q *request, path []string) (*route.Match[handler], error) {
	method := q.r.Method
	// Nova declares no HEAD route: HEAD is GET throughout, so that a path
	// GET lacks at this version stays a 404 for HEAD too.
	if method == http.MethodHead {
		method = http.MethodGet
	}
	m, err := a.table.Match(route.Request{Method: method, Path: path, Query: q.r.URL.Query(), Version: q.mv, Ctx: q.r.Context()})
	var na *route.MethodNotAllowedError
	switch {
	case err == nil:
		return m, nil
	case errors.As(err, &na):
		// A trailing slash names an empty id (DELETE /servers/): Nova's
		// router has no route with one and answers 404, where the
		// collection's other methods would make it a 405.
		if strings.HasSuffix(q.r.URL.EscapedPath(), "/") {
			return nil, notFound(msgNotFound)
		}
		return nil, q.notAllowed(na.Allow...)
	}
	return nil, notFound(msgNotFound)
}

// notAllowed is Nova's 405 with an Allow header; methods come sorted.
func (q *request) notAllowed(methods ...string) error {
	q.allow = strings.Join(methods, ", ")
	return faultf(http.StatusMethodNotAllowed, msgMethodNotAllow)
}
