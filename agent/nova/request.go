package nova

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/stratus-cloud/stratus/agent/identity"
	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// request is one API call as the handlers see it.
type request struct {
	api *API
	w   http.ResponseWriter
	r   *http.Request
	id  string
	// mv is the negotiated microversion's minor number.
	mv int
	// token is the caller's verified token; authToken its raw form,
	// passed on to RPCs.
	token     *identity.Token
	authToken string
	// project is the project id when the URL carries one (it then
	// appears in links too, as in Nova).
	project string
	params  route.Params
	// base is the scheme, host and MountPath the client used.
	base string
	// allow is the Allow header of a 405.
	allow string
	// nets caches the networking of the servers the request shows.
	nets map[string]*structs.InstanceNetInfo
	// vols caches the volumes of the projects whose servers the request
	// shows (volumes_attached).
	vols map[string][]*structs.Volume
	// legacy is set for Nova's legacy v2 API (/v2): 2.1 without
	// microversion headers, unknown body properties dropped.
	legacy bool
}

// atLeast reports whether the request's microversion is 2.minor or later.
func (q *request) atLeast(minor int) bool { return q.mv >= minor }

// param returns a path parameter.
func (q *request) param(name string) string { return q.params[name] }

// query returns the query string.
func (q *request) query() url.Values { return q.r.URL.Query() }

// authenticate verifies X-Auth-Token.
func (q *request) authenticate() error {
	raw := q.r.Header.Get("X-Auth-Token")
	if raw == "" || q.api.verifier == nil {
		return faultf(http.StatusUnauthorized, msgAuthRequired)
	}
	tok, err := q.api.verifier.Verify(raw)
	if err != nil || tok == nil {
		return faultf(http.StatusUnauthorized, msgAuthRequired)
	}
	q.token, q.authToken = tok, raw
	route.ObserveCaller(q.r.Context(), tok.UserID, tok.ProjectID)
	// Calls forwarded to the agent hosting an instance (consoles,
	// diagnostics) present the caller's token there.
	q.r = q.r.WithContext(httpx.WithToken(q.r.Context(), raw))
	return nil
}

// subject is the caller as policy sees it.
func (q *request) subject() *policy.Subject {
	if q.token == nil {
		return nil
	}
	return &policy.Subject{UserID: q.token.UserID, ProjectID: q.token.ProjectID, Roles: q.token.Roles}
}

// isAdmin reports whether the caller passes Nova's context_is_admin.
func (q *request) isAdmin() bool { return q.subject().IsAdmin() }

// isMember reports whether the caller is a member (or admin) of its
// project.
func (q *request) isMember() bool { return q.subject().IsMember() }

// isReader reports whether the caller may read its project.
func (q *request) isReader() bool { return q.subject().IsReader() }

// authorize applies a route's default policy; every route needs a
// project-scoped token.
func (q *request) authorize(level access, rule string) error {
	if !level.Allows(q.subject()) {
		return policyFault(rule)
	}
	return nil
}

// call makes an RPC on the caller's behalf: the request carries the
// caller's token (structs.Credentialed), which the servers check.
func (q *request) call(method string, args, reply any) error {
	return route.AsCaller(q.api.rpc, q.authToken).RPC(method, args, reply)
}

// projectPath is "/<project>" when the URL carried the project id.
func (q *request) projectPath() string {
	if q.project == "" {
		return ""
	}
	return "/" + q.project
}

// selfHref is a versioned link: <base>/v2.1[/<project>]/<parts…>, or
// /v2 on the legacy API.
func (q *request) selfHref(parts ...string) string {
	version := "/v2.1"
	if q.legacy {
		version = "/" + v20Path
	}
	return q.base + version + q.projectPath() + "/" + joinEscaped(parts)
}

// bookmarkHref is an unversioned link: <base>[/<project>]/<parts…>.
func (q *request) bookmarkHref(parts ...string) string {
	return q.base + q.projectPath() + "/" + joinEscaped(parts)
}

func joinEscaped(parts []string) string {
	esc := make([]string, len(parts))
	for i, p := range parts {
		esc[i] = url.PathEscape(p)
	}
	return strings.Join(esc, "/")
}

// link is one entry of a Nova links list.
type link struct {
	Href string `json:"href"`
	Rel  string `json:"rel"`
	Type string `json:"type,omitempty"`
}

// links are the self and bookmark links of a resource.
func (q *request) links(collection, id string) []link {
	return []link{{Href: q.selfHref(collection, id), Rel: "self"}, {Href: q.bookmarkHref(collection, id), Rel: "bookmark"}}
}

// notFoundAs turns an RPC not-found into Nova's 404 message.
func notFoundAs(err error, format string, args ...any) error {
	if structs.KindOf(err) == structs.KindNotFound {
		return notFound(format, args...)
	}
	return err
}
