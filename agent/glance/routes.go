package glance

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
)

// handler answers one request; it writes its own success and returns
// errors for the API to answer Glance's way.
type handler func(q *request) error

// routes is every route of the API under MountPath with who may call
// it: version discovery is public; everything else needs a
// project-scoped token, and the handlers and the servers apply Glance's
// per-image policy (owner, visibility, membership, member role).
func (a *API) routes() []route.Route[handler] {
	const token = policy.Anyone
	return []route.Route[handler]{
		{Pattern: "GET /", Access: policy.Public, Handle: a.versions},
		{Pattern: "GET /versions", Access: policy.Public, Handle: a.versionList},
		{Pattern: "GET /v2", Access: policy.Public, Handle: a.versionList},

		{Pattern: "GET /v2/images", Access: token, Handle: a.imageList},
		{Pattern: "POST /v2/images", Access: token, Handle: a.imageCreate},
		{Pattern: "GET /v2/images/{id}", Access: token, Handle: a.imageShow},
		{Pattern: "PATCH /v2/images/{id}", Access: token, Handle: a.imageUpdate},
		{Pattern: "DELETE /v2/images/{id}", Access: token, Handle: a.imageDelete},
		{Pattern: "PUT /v2/images/{id}/file", Access: token, Handle: a.imageUpload},
		{Pattern: "GET /v2/images/{id}/file", Access: token, Handle: a.imageDownload},
		{Pattern: "POST /v2/images/{id}/actions/deactivate", Access: token, Handle: a.imageDeactivate},
		{Pattern: "POST /v2/images/{id}/actions/reactivate", Access: token, Handle: a.imageReactivate},
		{Pattern: "PUT /v2/images/{id}/tags/{tag}", Access: token, Handle: a.tagAdd},
		{Pattern: "DELETE /v2/images/{id}/tags/{tag}", Access: token, Handle: a.tagDelete},
		{Pattern: "GET /v2/images/{id}/members", Access: token, Handle: a.memberList},
		{Pattern: "POST /v2/images/{id}/members", Access: token, Handle: a.memberCreate},
		{Pattern: "GET /v2/images/{id}/members/{member}", Access: token, Handle: a.memberShow},
		{Pattern: "PUT /v2/images/{id}/members/{member}", Access: token, Handle: a.memberUpdate},
		{Pattern: "DELETE /v2/images/{id}/members/{member}", Access: token, Handle: a.memberDelete},

		{Pattern: "GET /v2/schemas/image", Access: token, Handle: a.schemaImage},
		{Pattern: "GET /v2/schemas/images", Access: token, Handle: a.schemaImages},
		{Pattern: "GET /v2/schemas/member", Access: token, Handle: a.schemaMember},
		{Pattern: "GET /v2/schemas/members", Access: token, Handle: a.schemaMembers},
		{Pattern: "GET /v2/info/import", Access: token, Handle: a.importInfo},
	}
}

// slashRoots are the only paths a trailing slash may end: Glance's
// version documents. Anywhere else it is a path no route has.
var slashRoots = map[string]bool{"": true, "v2": true}

// allowOrder is the order of the methods in an Allow header, as Glance
// has always listed them.
var allowOrder = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// dispatch routes a request under MountPath: segments match however the
// client escaped them, and parameters are unescaped once matched.
func (a *API) dispatch(q *request) error {
	rest, ok := strings.CutPrefix(q.r.URL.EscapedPath(), MountPath)
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		return errNotFound()
	}
	path := route.SplitCanonical(rest)
	if strings.HasSuffix(rest, "/") && !slashRoots[strings.Join(path, "/")] {
		return errNotFound()
	}
	m, err := a.table.Match(route.Request{Method: q.r.Method, Path: path, Ctx: q.r.Context()})
	var na *route.MethodNotAllowedError
	switch {
	case errors.As(err, &na):
		q.w.Header().Set("Allow", strings.Join(inOrder(na.Allow, allowOrder), ", "))
		return errorf(http.StatusMethodNotAllowed, "The method %s is not allowed for this resource.", q.r.Method)
	case err != nil:
		return errNotFound()
	}
	if m.Route.Access != policy.Public {
		if err := q.authenticate(); err != nil {
			return err
		}
	}
	q.params = m.Params
	return m.Route.Handle(q)
}

// inOrder sorts methods by their place in order.
func inOrder(methods, order []string) []string {
	out := slices.Clone(methods)
	slices.SortStableFunc(out, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	return out
}

// errNotFound is the 404 of a path no route has.
func errNotFound() error { return errorf(http.StatusNotFound, "The resource could not be found.") }
