package route

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/stratus-cloud/stratus/policy"
)

// Route declares one route of an API. H is the API's handler type.
type Route[H any] struct {
	// Pattern is "METHOD /path", each {name} segment a parameter and a
	// last {name...} segment the rest of the path ("GET
	// /flavors/{id}"). A route for GET also answers HEAD, unless the
	// table has a HEAD route of its own for the path.
	Pattern string
	// Query, when set, is a query parameter the request must carry for
	// the route to match (S3's ?uploads); such a route is tried before
	// the same path without one.
	Query string
	// MinVersion and MaxVersion bound the microversions (2.x minor
	// numbers) the route exists in; zero leaves that side open. APIs
	// without microversions leave both zero.
	MinVersion, MaxVersion int
	// Access is who may call the route by default. Every route states
	// one: a table with policy.Unset refuses to build.
	Access policy.Access
	// Policy is the policy rule a refusal names
	// ("os_compute_api:flavors:index"); empty where the API names none.
	Policy string
	// Handle answers the request.
	Handle H
}

// Method is the route's HTTP method.
func (r *Route[H]) Method() string {
	m, _, _ := strings.Cut(r.Pattern, " ")
	return m
}

// Path is the route's path pattern.
func (r *Route[H]) Path() string {
	_, p, _ := strings.Cut(r.Pattern, " ")
	return p
}

// Params are a matched route's path parameters, unescaped.
type Params map[string]string

// Get returns a parameter, "" when the route has none of that name.
func (p Params) Get(name string) string { return p[name] }

// Split splits an escaped URL path into its segments, ignoring leading
// and trailing slashes. Segments stay escaped: a parameter is unescaped
// only once matched, so that an escaped "/" in an id stays in the id.
func Split(escapedPath string) []string {
	p := strings.Trim(escapedPath, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// compiled is a Route with its pattern parsed.
type compiled[H any] struct {
	*Route[H]
	method string
	segs   []string
	// rest is set when the last segment is {name...}.
	rest bool
}

func compile[H any](rt *Route[H]) (*compiled[H], error) {
	method, path, ok := strings.Cut(rt.Pattern, " ")
	if !ok || method == "" || !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("route %q: want \"METHOD /path\"", rt.Pattern)
	}
	if rt.Access == policy.Unset {
		return nil, fmt.Errorf("route %q states no access level", rt.Pattern)
	}
	if rt.MaxVersion != 0 && rt.MaxVersion < rt.MinVersion {
		return nil, fmt.Errorf("route %q: version range %d-%d is empty", rt.Pattern, rt.MinVersion, rt.MaxVersion)
	}
	c := &compiled[H]{Route: rt, method: method, segs: Split(path)}
	for i, s := range c.segs {
		if !isParam(s) {
			continue
		}
		if strings.HasSuffix(s, "...}") {
			if i != len(c.segs)-1 {
				return nil, fmt.Errorf("route %q: {name...} must be the last segment", rt.Pattern)
			}
			c.rest = true
		}
	}
	return c, nil
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

func paramName(seg string) string { return strings.TrimSuffix(strings.Trim(seg, "{}"), "...") }

// match reports whether path (escaped segments) fits the route, with
// its parameters unescaped.
func (c *compiled[H]) match(path []string) (Params, bool) {
	n := len(c.segs)
	if c.rest {
		if len(path) < n {
			return nil, false
		}
	} else if len(path) != n {
		return nil, false
	}
	var params Params
	for i, seg := range c.segs {
		if !isParam(seg) {
			if seg != path[i] {
				return nil, false
			}
			continue
		}
		raw := path[i]
		if c.rest && i == n-1 {
			raw = strings.Join(path[i:], "/")
		}
		v, err := url.PathUnescape(raw)
		if err != nil {
			return nil, false
		}
		if params == nil {
			params = Params{}
		}
		params[paramName(seg)] = v
	}
	return params, true
}

// moreSpecific orders routes: segment by segment a literal before a
// parameter, a route with a query condition before one without, and a
// rest parameter last.
func moreSpecific[H any](a, b *compiled[H]) bool {
	for i := 0; i < len(a.segs) && i < len(b.segs); i++ {
		pa, pb := isParam(a.segs[i]), isParam(b.segs[i])
		if pa != pb {
			return pb
		}
	}
	if a.rest != b.rest {
		return b.rest
	}
	return a.Query != "" && b.Query == ""
}

// inVersion reports whether the route exists at microversion mv.
func (c *compiled[H]) inVersion(mv int) bool {
	return mv >= c.MinVersion && (c.MaxVersion == 0 || mv <= c.MaxVersion)
}
