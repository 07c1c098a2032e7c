package nova

import (
	"net/http"
	"sort"
	"strings"

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

// routeSpec declares one route: "METHOD /path/{param}", the microversion
// range it exists in (0 for unbounded), who may call it and the Nova
// policy rule named in a refusal.
type routeSpec struct {
	pattern    string
	minV, maxV int
	access     access
	policy     string
	handle     func(*request) (*reply, error)
}

// route is a compiled routeSpec.
type route struct {
	routeSpec
	method string
	segs   []string
}

func (s routeSpec) compile() *route {
	method, path, ok := strings.Cut(s.pattern, " ")
	if !ok {
		panic("nova: route pattern without a method: " + s.pattern)
	}
	return &route{routeSpec: s, method: method, segs: splitPath(path)}
}

// match reports whether path fits the route's segments, and its params.
func (rt *route) match(path []string) (map[string]string, bool) {
	if len(path) != len(rt.segs) {
		return nil, false
	}
	var params map[string]string
	for i, seg := range rt.segs {
		if strings.HasPrefix(seg, "{") {
			if params == nil {
				params = map[string]string{}
			}
			params[strings.Trim(seg, "{}")] = path[i]
		} else if seg != path[i] {
			return nil, false
		}
	}
	return params, true
}

// moreSpecific orders routes so that, segment by segment, a literal
// comes before a parameter.
func moreSpecific(a, b *route) bool {
	for i := 0; i < len(a.segs) && i < len(b.segs); i++ {
		pa, pb := strings.HasPrefix(a.segs[i], "{"), strings.HasPrefix(b.segs[i], "{")
		if pa != pb {
			return pb
		}
	}
	return false
}

func (rt *route) inVersion(mv int) bool {
	return mv >= max(rt.minV, minMicroversion) && (rt.maxV == 0 || mv <= rt.maxV)
}

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

// topLevel is every collection the router serves at the root; a first
// segment that is not one of them is Nova's optional project id.
func topLevel(routes []*route) map[string]bool {
	out := map[string]bool{}
	for _, rt := range routes {
		if len(rt.segs) > 0 {
			out[rt.segs[0]] = true
		}
	}
	return out
}

// dispatch answers one request: version discovery without a token,
// everything else under /v2.1 with one.
func (a *API) dispatch(q *request) (*reply, error) {
	path := splitPath(strings.TrimPrefix(q.r.URL.Path, MountPath))
	mv, verr := negotiate(q.r.Header)
	if verr == nil {
		q.mv = mv
		setVersionHeaders(q.w.Header(), mv)
	}
	switch {
	case len(path) == 0:
		if q.r.Method != http.MethodGet && q.r.Method != http.MethodHead {
			return nil, q.notAllowed("GET")
		}
		return a.versionsIndex(q)
	case path[0] != "v2.1":
		return nil, notFound(msgNotFound)
	case len(path) == 1:
		if q.r.Method != http.MethodGet && q.r.Method != http.MethodHead {
			return nil, q.notAllowed("GET")
		}
		return a.versionShow(q)
	}
	if err := q.authenticate(); err != nil {
		return nil, err
	}
	if verr != nil {
		return nil, verr
	}
	path = path[1:]
	if top := a.collections; !top[path[0]] && len(path) > 1 && top[path[1]] {
		if path[0] != q.token.ProjectID {
			return nil, badRequest("Malformed request URL: URL's project_id '%s' doesn't match Context's project_id '%s'", path[0], q.token.ProjectID)
		}
		q.project, path = path[0], path[1:]
	}
	rt, err := a.route(q, path)
	if err != nil {
		return nil, err
	}
	if err := q.authorize(rt.access, rt.policy); err != nil {
		return nil, err
	}
	return rt.handle(q)
}

// route finds the route for the request's method, path and version:
// 404 when no path matches (or not at this version), 405 when only
// other methods do.
func (a *API) route(q *request, path []string) (*route, error) {
	method := q.r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	allowed := map[string]bool{}
	// outOfVersion is a route for this path that the microversion lacks;
	// it hides less specific routes (/os-hypervisors/statistics at 2.88
	// is gone, not a hypervisor named "statistics").
	var outOfVersion *route
	for _, rt := range a.routes {
		params, ok := rt.match(path)
		if !ok {
			continue
		}
		if !rt.inVersion(q.mv) {
			if rt.method == method && outOfVersion == nil {
				outOfVersion = rt
			}
			continue
		}
		if rt.method != method {
			allowed[rt.method] = true
			continue
		}
		if outOfVersion != nil && moreSpecific(outOfVersion, rt) {
			return nil, notFound(msgNotFound)
		}
		q.params = params
		return rt, nil
	}
	if len(allowed) > 0 {
		return nil, q.notAllowed(sortedKeys(allowed)...)
	}
	return nil, notFound(msgNotFound)
}

// notAllowed is Nova's 405 with an Allow header.
func (q *request) notAllowed(methods ...string) error {
	sort.Strings(methods)
	q.allow = strings.Join(methods, ", ")
	return faultf(http.StatusMethodNotAllowed, msgMethodNotAllow)
}
