package native

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent/identity"
	"github.com/stratus-cloud/stratus/structs"
)

// observed records the route labels the API reports.
type observed struct {
	mu     sync.Mutex
	routes map[string]int
}

func (o *observed) ObserveHTTP(route string, code int, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.routes == nil {
		o.routes = map[string]int{}
	}
	o.routes[route] = code
}

// TestRoutingEdges: exact paths (a trailing slash is no route), Allow
// headers in the order GET, POST, PUT, DELETE, the metrics route served
// as is and unobserved, and metrics labelled by route template.
func TestRoutingEdges(t *testing.T) {
	t.Parallel()
	obs := &observed{}
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("# metrics\n")) })
	h := New(Config{RPC: &fakeRPC{}, Observer: obs, Metrics: metrics, Logger: hclog.NewNullLogger()}).Handler()
	for _, tc := range []struct {
		method, path string
		code         int
		allow        string
	}{
		{"GET", "/v1/flavors/", 404, ""},
		{"GET", "/v1/", 404, ""},
		{"PUT", "/v1/flavors/f1", 405, "GET, DELETE"},
		{"DELETE", "/v1/agent/keyring/list", 405, "GET, POST, PUT"},
		{"POST", "/v1/metrics", 405, "GET"},
		{"HEAD", "/v1/hosts/h1/enable", 405, "POST"},
		{"GET", "/v1/metrics", 200, ""},
	} {
		rec := serve(h, tc.method, tc.path, "")
		if rec.Code != tc.code || rec.Header().Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d allow %q, want %d %q", tc.method, tc.path, rec.Code, rec.Header().Get("Allow"), tc.code, tc.allow)
		}
	}
	if rec := serve(h, "GET", "/v1/metrics", ""); rec.Body.String() != "# metrics\n" {
		t.Errorf("metrics body %q", rec.Body)
	}
	serve(h, "GET", "/v1/flavors/f1", "")
	obs.mu.Lock()
	defer obs.mu.Unlock()
	// The fake servers answer no flavor: a 404 of the route, not an
	// unmatched one.
	if obs.routes["unmatched"] != 405 || obs.routes["GET /v1/flavors/{id}"] != 404 {
		t.Errorf("observed %v", obs.routes)
	}
	if _, ok := obs.routes[metricsPattern]; ok {
		t.Errorf("the metrics route was observed: %v", obs.routes)
	}
}

// verifier knows one token per role set.
type verifier map[string]*identity.Token

func (v verifier) Verify(raw string) (*identity.Token, error) {
	if tok := v[raw]; tok != nil {
		return tok, nil
	}
	return nil, structs.Errorf(structs.KindUnauthenticated, "the token is not valid")
}

// TestAuthorization: with ACLs on, a route needs a verified token whose
// roles reach its level; a confined caller's requests are scoped to its
// project, and another project's instance answers 404.
func TestAuthorization(t *testing.T) {
	t.Parallel()
	f := &fakeRPC{answer: func(method string, args, reply any) error {
		if out, ok := reply.(*structs.SingleInstanceResponse); ok {
			out.Instance = &structs.Instance{ID: args.(*structs.InstanceSpecificRequest).InstanceID, ProjectID: "p1"}
		}
		return nil
	}}
	v := verifier{
		"tok":    {TokenClaims: structs.TokenClaims{UserID: "u1", ProjectID: "p1", Roles: []string{"reader"}}},
		"member": {TokenClaims: structs.TokenClaims{UserID: "u2", ProjectID: "p2", Roles: []string{"member", "reader"}}},
		"admin":  {TokenClaims: structs.TokenClaims{UserID: "a", ProjectID: "p0", Roles: []string{"admin", "member", "reader"}}},
	}
	h := New(Config{RPC: f, ACLEnabled: true, Verifier: v, Logger: hclog.NewNullLogger()}).Handler()
	req := func(token, method, path string) (int, http.Header, ErrorBody) {
		rr := httptest.NewRequest(method, path, nil)
		if token != "" {
			rr.Header.Set("X-Auth-Token", token)
		}
		r := httptest.NewRecorder()
		h.ServeHTTP(r, rr)
		var e ErrorBody
		if r.Code >= 400 {
			e = decodeBody[ErrorBody](t, r)
		}
		return r.Code, r.Header(), e
	}
	if code, hdr, e := req("", "GET", "/v1/instances"); code != 401 || e.Kind != "unauthenticated" || hdr.Get("WWW-Authenticate") == "" {
		t.Errorf("no token: %d %+v %v", code, e, hdr)
	}
	if code, _, _ := req("forged", "GET", "/v1/instances"); code != 401 {
		t.Errorf("forged token: %d", code)
	}
	if code, _, _ := req("", "GET", "/v1/status/leader"); code != 200 {
		t.Errorf("public route: %d", code)
	}
	if code, _, e := req("tok", "POST", "/v1/instances/i1/actions"); code != 403 || e.Error != "this API needs the member role" {
		t.Errorf("a reader's action: %d %+v", code, e)
	}
	if code, _, _ := req("tok", "GET", "/v1/instances/i1"); code != 200 {
		t.Errorf("own project's instance: %d", code)
	}
	if code, _, e := req("member", "GET", "/v1/instances/i1"); code != 404 || e.Error != `instance "i1" not found` {
		t.Errorf("another project's instance: %d %+v", code, e)
	}
	if code, _, _ := req("admin", "GET", "/v1/instances/i1"); code != 200 {
		t.Errorf("an admin: %d", code)
	}
	// The list is confined to the caller's project, and made with its
	// token.
	req("member", "GET", "/v1/instances?project=p1")
	if args := f.last(t).args.(*structs.InstanceListRequest); args.ProjectID != "p2" || args.AuthToken != "member" {
		t.Errorf("a member's list: %+v", args)
	}
	// Without an identity service nothing above public is served.
	h = New(Config{RPC: f, ACLEnabled: true, Logger: hclog.NewNullLogger()}).Handler()
	if rec := serve(h, "GET", "/v1/hosts", ""); rec.Code != 503 {
		t.Errorf("no identity service: %d", rec.Code)
	}
}

// TestHandlerPanicsAreContained: a panic in a handler answers 500 in the
// native body, and the server goes on.
func TestHandlerPanicsAreContained(t *testing.T) {
	t.Parallel()
	h, _ := bootRoutes(func(string, any, any) error { panic(errors.New("boom")) })
	rec := serve(h, "GET", "/v1/hosts", "")
	if e := decodeBody[ErrorBody](t, rec); rec.Code != 500 || e.Kind != "internal" || e.Error != "internal error" {
		t.Fatalf("panic answered %d %+v", rec.Code, e)
	}
}
