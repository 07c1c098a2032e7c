package neutron

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// routeAPI is the API over an RPC that answers every call with err.
func routeAPI(err error) http.Handler {
	return New(Config{RPC: route.Func(func(string, any, any) error { return err }), Verifier: fakeVerifier{
		aliceTok:  {TokenClaims: structs.TokenClaims{UserID: "u-alice", ProjectID: "p-alice", Roles: []string{"member", "reader"}}},
		noProject: {TokenClaims: structs.TokenClaims{UserID: "u-alice"}},
	}}).Handler()
}

func TestRouteTableStatesAccess(t *testing.T) {
	a := New(Config{})
	for _, rt := range a.table.Routes() {
		public := rt.Pattern == "GET /" || rt.Pattern == "GET /v2.0"
		if (rt.Access == policy.Public) != public || rt.Access == policy.Unset {
			t.Errorf("%s: access %s", rt.Pattern, rt.Access)
		}
	}
}

// TestRouteEdges pins what routing answers before any handler: 404s,
// 405s with their Allow header, HEAD as GET, the .json suffix, and
// segments matched as they came escaped.
func TestRouteEdges(t *testing.T) {
	h := routeAPI(structs.Errorf(structs.KindNotFound, "nothing"))
	for _, c := range []struct {
		method, path, token string
		status              int
		allow               string
	}{
		{"GET", "/network", "", 200, ""},
		{"HEAD", "/network/v2.0/", "", 200, ""},
		{"POST", "/network/v2.0.json", "", 405, "GET"},
		{"PUT", "/network/v2.0/networks/", "", 405, "GET, POST"},
		{"POST", "/network/v2.0/networks/x.json", "", 405, "DELETE, GET, PUT"},
		{"POST", "/network/v2.0/networks/a%2Fb", "", 405, "DELETE, GET, PUT"},
		{"HEAD", "/network/v2.0/routers/x/add_router_interface", "", 405, "PUT"},
		{"OPTIONS", "/network/v2.0/quotas/p", "", 405, "DELETE, GET, PUT"},
		{"GET", "/network/v2.0/netw%6Frks", "", 404, ""},
		{"GET", "/network/v2%2E0", "", 404, ""},
		{"GET", "/network/v2.0/networks/x/y", "", 404, ""},
		{"DELETE", "/network/nope", aliceTok, 404, ""},
		{"GET", "/network/v2.0/networks", "", 401, ""},
		{"HEAD", "/network/v2.0/networks/x", aliceTok, 404, ""},
		{"GET", "/network/v2.0/networks", noProject, 403, ""},
		// Listing all quotas is admin-only, refused before the handler.
		{"GET", "/network/v2.0/quotas", aliceTok, 403, ""},
	} {
		req := httptest.NewRequest(c.method, c.path, nil)
		if c.token != "" {
			req.Header.Set("X-Auth-Token", c.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.status || rec.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow %q, want %d %q: %s", c.method, c.path, rec.Code, rec.Header().Get("Allow"), c.status, c.allow, rec.Body)
		}
	}
}

func TestQuotaListRefusalNamesRule(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/network/v2.0/quotas", nil)
	req.Header.Set("X-Auth-Token", aliceTok)
	routeAPI(nil).ServeHTTP(rec, req)
	want := `{"NeutronError":{"detail":"","message":"(rule:get_quota) is disallowed by policy","type":"PolicyNotAuthorized"}}`
	if rec.Code != http.StatusForbidden || rec.Body.String() != want {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// TestServersRefusingTheTokenIs401: a token the agent verified but the
// servers refuse is Keystone's 401, as from any other API.
func TestServersRefusingTheTokenIs401(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/network/v2.0/networks", nil)
	req.Header.Set("X-Auth-Token", aliceTok)
	routeAPI(structs.Errorf(structs.KindUnauthenticated, "token revoked")).ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") == "" {
		t.Fatalf("%d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}
