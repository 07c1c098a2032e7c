package route

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// Table is an API's compiled routes: the one matcher every API uses.
type Table[H any] struct {
	routes []*compiled[H]
	// firsts are the first path segments of the routes.
	firsts map[string]bool
}

// NewTable compiles routes. It refuses a malformed pattern, a route
// without an access level, and two routes for the same method, path,
// query condition and overlapping versions.
func NewTable[H any](routes ...[]Route[H]) (*Table[H], error) {
	t := &Table[H]{firsts: map[string]bool{}}
	for _, list := range routes {
		for i := range list {
			c, err := compile(&list[i])
			if err != nil {
				return nil, err
			}
			for _, o := range t.routes {
				if o.method == c.method && slices.Equal(o.segs, c.segs) && o.Query == c.Query && overlap(o, c) {
					return nil, fmt.Errorf("route %q is declared twice", c.Pattern)
				}
			}
			t.routes = append(t.routes, c)
			if len(c.segs) > 0 {
				t.firsts[c.segs[0]] = true
			}
		}
	}
	sort.SliceStable(t.routes, func(i, j int) bool { return moreSpecific(t.routes[i], t.routes[j]) })
	return t, nil
}

// MustTable is NewTable for tables written in the source, where an error
// is a programming mistake that no request could cause.
func MustTable[H any](routes ...[]Route[H]) *Table[H] {
	t, err := NewTable(routes...)
	if err != nil {
		panic("route: " + err.Error())
	}
	return t
}

func overlap[H any](a, b *compiled[H]) bool {
	aMax, bMax := a.MaxVersion, b.MaxVersion
	if aMax == 0 {
		aMax = int(^uint(0) >> 1)
	}
	if bMax == 0 {
		bMax = int(^uint(0) >> 1)
	}
	return a.MinVersion <= bMax && b.MinVersion <= aMax
}

// Routes lists the table's routes, most specific first.
func (t *Table[H]) Routes() []*Route[H] {
	out := make([]*Route[H], len(t.routes))
	for i, c := range t.routes {
		out[i] = c.Route
	}
	return out
}

// HasFirst reports whether some route's path starts with segment seg
// (Nova's optional project id is a first segment no route has).
func (t *Table[H]) HasFirst(seg string) bool { return t.firsts[seg] }

// Request is what a table matches: the method, the escaped path
// segments (Split), the query and the negotiated microversion (0 for
// APIs without microversions).
type Request struct {
	Method  string
	Path    []string
	Query   url.Values
	Version int
	// Ctx, when set, is the request's context: a match is recorded in
	// its Slot for the request metrics (observe.go).
	Ctx context.Context
}

// Match is the route a request matched and its parameters.
type Match[H any] struct {
	Route  *Route[H]
	Params Params
}

// ErrNotFound is returned by Table.Match when no route has the path at
// the request's version.
var ErrNotFound = errors.New("no route for this path")

// MethodNotAllowedError is returned by Table.Match when routes have the
// path, but none the method.
type MethodNotAllowedError struct {
	// Allow are the methods the path has, sorted.
	Allow []string
}

func (e *MethodNotAllowedError) Error() string {
	return "method not allowed; allowed: " + strings.Join(e.Allow, ", ")
}

// AllowHeader is the Allow header's value.
func (e *MethodNotAllowedError) AllowHeader() string { return strings.Join(e.Allow, ", ") }

// Match finds the route of a request. A route outside the request's
// microversion hides less specific routes of the same method (Nova's
// /os-hypervisors/statistics is gone at 2.88, not a hypervisor named
// "statistics"), and a method the path has only at other versions is a
// 404 rather than a 405. HEAD falls back to GET.
func (t *Table[H]) Match(req Request) (*Match[H], error) {
	m, err := t.matchMethod(req)
	if err == nil {
		observe(req.Ctx, m.Route.Pattern)
	}
	return m, err
}

func (t *Table[H]) matchMethod(req Request) (*Match[H], error) {
	if req.Method == "HEAD" {
		// A HEAD route of its own wins; otherwise HEAD is GET in every
		// respect, its 404s and 405s included.
		if m, err := t.match(req, "HEAD"); err == nil {
			return m, nil
		}
		return t.match(req, "GET")
	}
	return t.match(req, req.Method)
}

func (t *Table[H]) match(req Request, method string) (*Match[H], error) {
	allowed := map[string]bool{}
	var outOfVersion *compiled[H]
	for _, c := range t.routes {
		if c.Query != "" && !req.Query.Has(c.Query) {
			continue
		}
		params, ok := c.match(req.Path)
		if !ok {
			continue
		}
		if !c.inVersion(req.Version) {
			if c.method == method && outOfVersion == nil {
				outOfVersion = c
			}
			continue
		}
		if c.method != method {
			allowed[c.method] = true
			continue
		}
		if outOfVersion != nil && moreSpecific(outOfVersion, c) {
			return nil, ErrNotFound
		}
		return &Match[H]{Route: c.Route, Params: params}, nil
	}
	// A method the path has in other versions is a 404 at this one, as
	// Nova's VersionNotFoundForAPIMethod, even when other methods match.
	if len(allowed) == 0 || outOfVersion != nil {
		return nil, ErrNotFound
	}
	allow := make([]string, 0, len(allowed))
	for m := range allowed {
		allow = append(allow, m)
	}
	sort.Strings(allow)
	return nil, &MethodNotAllowedError{Allow: allow}
}
