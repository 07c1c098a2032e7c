package glance

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

func TestRouteTableStatesAccess(t *testing.T) {
	a := New(Config{})
	for _, rt := range a.table.Routes() {
		public := !strings.HasPrefix(rt.Path(), "/v2/")
		if (rt.Access == policy.Public) != public || rt.Access == policy.Unset {
			t.Errorf("%s: access %s", rt.Pattern, rt.Access)
		}
	}
}

// TestRouteEdges pins what routing answers: 404s, 405s with Allow in
// Glance's order, HEAD as GET, trailing slashes only on the version
// documents, segments matched however the client escaped them and an
// escaped "/" kept inside its parameter.
func TestRouteEdges(t *testing.T) {
	h := New(Config{RPC: newFuzzRPC(), Verifier: fuzzVerifier{}}).Handler()
	img := "/image/v2/images/" + fuzzImageID
	for _, c := range []struct {
		method, path, token string
		status              int
		allow, body         string
	}{
		{"GET", "/image", "", 300, "", ""},
		{"HEAD", "/image/", "", 300, "", ""},
		{"POST", "/image/", "", 405, "GET", "The method POST is not allowed"},
		{"GET", "/image/v%32", "", 200, "", ""},
		{"GET", "/image/v2/", "", 200, "", ""},
		{"GET", "/image/versions/", "", 404, "", ""},
		{"PUT", "/image/v2/imag%65s", "", 405, "GET, POST", ""},
		{"GET", "/image/v2/imag%65s", "member", 200, "", ""},
		{"GET", "/image/v2/images/", "member", 404, "", ""},
		{"GET", img + "/", "member", 404, "", ""},
		{"POST", img, "", 405, "GET, PATCH, DELETE", ""},
		{"POST", img + "/file", "", 405, "GET, PUT", ""},
		{"HEAD", img + "/tags/t1", "", 405, "PUT, DELETE", ""},
		{"GET", img + "/actions/deactivate", "", 405, "POST", ""},
		{"POST", img + "/members/m", "", 405, "GET, PUT, DELETE", ""},
		{"GET", "/image/v2/images/x/y/z", "", 404, "", ""},
		{"GET", "/image/v2/schemas/nope", "member", 404, "", ""},
		{"GET", img, "", 401, "", ""},
		{"HEAD", img, "member", 200, "", ""},
		{"GET", "/image/v2/images/a%2Fb", "member", 404, "", "No image found with ID a/b"},
	} {
		req := httptest.NewRequest(c.method, c.path, nil)
		if c.token != "" {
			req.Header.Set("X-Auth-Token", c.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.status || rec.Header().Get("Allow") != c.allow || !strings.Contains(rec.Body.String(), c.body) {
			t.Errorf("%s %s: %d Allow %q, want %d %q: %s", c.method, c.path, rec.Code, rec.Header().Get("Allow"), c.status, c.allow, rec.Body)
		}
	}
}

// TestServersRefusingTheTokenIs401: a token the agent verified but the
// servers refuse (revoked meanwhile) is a 401, as from any other API.
func TestServersRefusingTheTokenIs401(t *testing.T) {
	rpc := route.Func(func(string, any, any) error { return structs.Errorf(structs.KindUnauthenticated, "token revoked") })
	req := httptest.NewRequest("GET", "/image/v2/images", nil)
	req.Header.Set("X-Auth-Token", "member")
	rec := httptest.NewRecorder()
	New(Config{RPC: rpc, Verifier: fuzzVerifier{}}).Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
