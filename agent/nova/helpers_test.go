package nova

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// Tokens of the test identities.
const (
	adminTok  = "tok-admin"  // admin of project p-admin
	memberTok = "tok-alice"  // member of p-demo
	readerTok = "tok-carol"  // reader of p-demo
	otherTok  = "tok-bob"    // member of p-other
	noRoleTok = "tok-norole" // p-demo, no role
)

func testTokens() fakeVerifier {
	return fakeVerifier{
		adminTok:  {TokenClaims: structs.TokenClaims{UserID: "u-admin", ProjectID: "p-admin", Roles: []string{"admin", "member", "reader"}}},
		memberTok: {TokenClaims: structs.TokenClaims{UserID: "u-alice", ProjectID: "p-demo", Roles: []string{"member", "reader"}}},
		readerTok: {TokenClaims: structs.TokenClaims{UserID: "u-carol", ProjectID: "p-demo", Roles: []string{"reader"}}},
		otherTok:  {TokenClaims: structs.TokenClaims{UserID: "u-bob", ProjectID: "p-other", Roles: []string{"member"}}},
		noRoleTok: {TokenClaims: structs.TokenClaims{UserID: "u-dave", ProjectID: "p-demo"}},
	}
}

type harness struct {
	t   *testing.T
	rpc *fakeRPC
	srv *httptest.Server
	api *API
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	rpc := newFakeRPC()
	api := New(Config{RPC: rpc, Verifier: testTokens(), Servers: func() []ServerMember {
		return []ServerMember{{Name: "server-1", Alive: true}, {Name: "server-2", Alive: false}}
	}})
	mux := http.NewServeMux()
	mux.Handle(MountPath+"/", api.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &harness{t: t, rpc: rpc, srv: srv, api: api}
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// req sends a request; version "" sends no microversion header, body is
// JSON-encoded unless it is a string.
func (h *harness) req(method, path, token, version string, body any) *response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	r, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if token != "" {
		r.Header.Set("X-Auth-Token", token)
	}
	if version != "" {
		r.Header.Set("OpenStack-API-Version", "compute "+version)
	}
	if rd != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := &response{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			h.t.Fatalf("%s %s: body is not a JSON object: %v: %s", method, path, err, raw)
		}
	}
	return out
}

// ok asserts the status and returns the response.
func (r *response) expect(t *testing.T, status int) *response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	return r
}

// fault asserts a Nova fault body of the given name and status, and a
// message containing msg.
func (r *response) fault(t *testing.T, status int, name, msg string) {
	t.Helper()
	r.expect(t, status)
	f, ok := r.body[name].(map[string]any)
	if !ok || len(r.body) != 1 {
		t.Fatalf("fault body %s, want key %q", r.raw, name)
	}
	if f["code"] != float64(status) || !strings.Contains(f["message"].(string), msg) {
		t.Fatalf("fault %v, want code %d and message containing %q", f, status, msg)
	}
}

func (r *response) obj(keys ...string) map[string]any {
	m := r.body
	for _, k := range keys {
		m, _ = m[k].(map[string]any)
	}
	return m
}

func (r *response) list(key string) []any {
	l, _ := r.body[key].([]any)
	return l
}

// sample reads one of Nova's API samples.
func sample(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "api_samples", path))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sameKeys asserts that got has exactly the keys of want, minus the
// ones listed in skip (fields of a sample server that Stratus's server
// cannot have, such as security_groups without ports).
func sameKeys(t *testing.T, what string, got, want map[string]any, skip ...string) {
	t.Helper()
	w := map[string]any{}
	for k, v := range want {
		if !contains(skip, k) {
			w[k] = v
		}
	}
	g := map[string]any{}
	for k, v := range got {
		if !contains(skip, k) {
			g[k] = v
		}
	}
	if !reflect.DeepEqual(keys(g), keys(w)) {
		t.Fatalf("%s keys\n got %v\nwant %v", what, keys(g), keys(w))
	}
}

// sameShape asserts that got has want's structure recursively: the same
// keys in objects and the same JSON types (nulls match anything).
func sameShape(t *testing.T, what string, got, want any) {
	t.Helper()
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			t.Fatalf("%s: got %T, want an object", what, got)
		}
		sameKeys(t, what, g, w)
		for k := range w {
			if freeForm[k] {
				if g[k] != nil && w[k] != nil && reflect.TypeOf(g[k]) != reflect.TypeOf(w[k]) {
					t.Fatalf("%s.%s: got %T, want %T", what, k, g[k], w[k])
				}
				continue
			}
			sameShape(t, what+"."+k, g[k], w[k])
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			t.Fatalf("%s: got %T, want an array", what, got)
		}
		if len(w) > 0 && len(g) > 0 {
			sameShape(t, what+"[0]", g[0], w[0])
		}
	case nil:
	default:
		if got != nil && reflect.TypeOf(got) != reflect.TypeOf(want) {
			t.Fatalf("%s: got %T (%v), want %T (%v)", what, got, got, want, want)
		}
	}
}

// freeForm are objects whose keys are data (metadata, extra specs,
// addresses by network, hosts by name, audit logs by host), not part
// of the shape.
var freeForm = map[string]bool{"extra_specs": true, "metadata": true, "addresses": true, "hosts": true,
	"meta": true, "cpu_info": true, "log": true, "properties": true, "scheduler_hints": true}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func jsonNumber(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
