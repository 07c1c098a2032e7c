package identity

import (
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/policy"
)

func TestRouteTableStatesAccess(t *testing.T) {
	svc, err := New(Config{RPC: srv})
	if err != nil {
		t.Fatal(err)
	}
	public := map[string]bool{"GET /": true, "GET /v3": true, "POST /v3/auth/tokens": true}
	for _, rt := range svc.table.Routes() {
		if (rt.Access == policy.Public) != public[rt.Pattern] || rt.Access == policy.Unset {
			t.Errorf("%s: access %s", rt.Pattern, rt.Access)
		}
		// An admin route's refusal names its Keystone rule.
		if (rt.Access == policy.Admin) != strings.HasPrefix(rt.Policy, "identity:") {
			t.Errorf("%s: access %s, rule %q", rt.Pattern, rt.Access, rt.Policy)
		}
	}
}

// TestRouteEdges pins what routing answers: 404s, 405s with Allow in the
// old order (HEAD with GET), trailing slashes only on the version
// documents, segments matched however the client escaped them, and a
// refused admin route naming its rule.
func TestRouteEdges(t *testing.T) {
	e := newEnv(t, nil)
	demo := "X-Auth-Token: " + e.token(t, "demo", "demo")
	for _, c := range []struct {
		method, path string
		status       int
		allow, body  string
		headers      []string
	}{
		{"POST", "/identity/", 405, "GET, HEAD", "The method is not allowed for the requested URL.", nil},
		{"GET", "/identity/v%33", 200, "", `"v3.14"`, nil},
		{"HEAD", "/identity/v3/", 200, "", "", nil},
		{"PUT", "/identity/v3/auth/tokens", 405, "GET, HEAD, POST, DELETE", "", nil},
		{"POST", "/identity/v3/auth/catalog", 405, "GET, HEAD", "", nil},
		{"PUT", "/identity/v3/proj%65cts", 405, "GET, HEAD, POST", "", nil},
		{"POST", "/identity/v3/projects/a%2Fb", 405, "GET, HEAD, PATCH, DELETE", "", nil},
		{"POST", "/identity/v3/projects/p/users/u/roles/r", 405, "GET, HEAD, PUT, DELETE", "", nil},
		{"GET", "/identity/v3/users/u/password", 405, "POST", "", nil},
		{"GET", "/identity/v3/projects/", 404, "", "The resource could not be found.", nil},
		{"GET", "/identity/v3/projects/x/", 404, "", "", nil},
		{"GET", "/identity/v3/domains/default/x", 404, "", "", nil},
		{"GET", "/identity/nope", 404, "", "", nil},
		{"GET", "/identity/v3/projects", 401, "", "", nil},
		{"HEAD", "/identity/v3/projects/p/users/u/roles/r", 401, "", "", nil},
		{"GET", "/identity/v3/proj%65cts", 403, "", "identity:list_projects.", []string{demo}},
		{"GET", "/identity/v3/domains/default", 403, "", "identity:get_domain.", []string{demo}},
		{"GET", "/identity/v3/users/u/credentials/OS-EC2", 403, "", "identity:ec2_list_credentials.", []string{demo}},
	} {
		r := e.do(t, c.method, c.path, "", c.headers...)
		if r.status != c.status || r.header.Get("Allow") != c.allow || !strings.Contains(r.raw, c.body) {
			t.Errorf("%s %s: %d Allow %q, want %d %q: %s", c.method, c.path, r.status, r.header.Get("Allow"), c.status, c.allow, r.raw)
		}
	}
}
