package identity

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

// srv is one real in-process server shared by the package's tests, with
// devstack's identity seeded. Services are stateless, so each test builds
// its own over it.
var srv *server.Server

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "stratus-identity-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	level := hclog.Error
	if os.Getenv("STRATUS_TEST_LOG") != "" {
		level = hclog.Debug
	}
	srv, err = server.NewServer(&server.Config{
		NodeName: "id1", NodeID: "00000000-0000-0000-0000-0000000000a1", DataDir: dir,
		BindAddr: "127.0.0.1", BootstrapExpect: 1, GossipFast: true, NumSchedulers: -1,
		Logger: hclog.New(&hclog.LoggerOptions{Name: "id1", Level: level}),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start server:", err)
		return 1
	}
	defer func() { _ = srv.Shutdown() }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err = srv.SeedDevIdentity()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "seed identity:", err)
			return 1
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		keys, _ := srv.FSM().State().SigningKeys(nil)
		if len(keys) > 0 {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "no signing key was created")
			return 1
		}
		time.Sleep(50 * time.Millisecond)
	}
	return m.Run()
}

// env is a Service over srv, served by an httptest server.
type env struct {
	svc  *Service
	http *httptest.Server
}

func newEnv(t *testing.T, tweak func(*Config)) *env {
	t.Helper()
	cfg := Config{RPC: srv, Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn})}
	if tweak != nil {
		tweak(&cfg)
	}
	svc, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	svc.Start()
	t.Cleanup(svc.Stop)
	mux := http.NewServeMux()
	mux.Handle(MountPath, svc.Handler())
	mux.Handle(MountPath+"/", svc.Handler())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return &env{svc: svc, http: hs}
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// do sends a request with optional headers ("X-Auth-Token: …") and body.
func (e *env) do(t *testing.T, method, path, body string, headers ...string) *response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.http.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := e.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := &response{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			t.Fatalf("%s %s: body %q: %v", method, path, raw, err)
		}
	}
	return out
}

// want fails unless the answer has the status.
func (r *response) want(t *testing.T, status int) *response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	return r
}

// wantError checks Keystone's error body.
func (r *response) wantError(t *testing.T, code int, title string) {
	t.Helper()
	r.want(t, code)
	e, ok := r.body["error"].(map[string]any)
	if !ok || len(r.body) != 1 || e["code"] != float64(code) || e["title"] != title || e["message"] == "" || len(e) != 3 {
		t.Fatalf("error body %s", r.raw)
	}
}

// get walks a decoded JSON document: get(doc, "token", "user", "id").
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func passwordAuth(user, password, project string) string {
	scope := ""
	if project != "" {
		scope = `, "scope": {"project": {"name": "` + project + `", "domain": {"id": "default"}}}`
	}
	return `{"auth": {"identity": {"methods": ["password"], "password": {"user": {"name": "` + user +
		`", "domain": {"name": "Default"}, "password": "` + password + `"}}}` + scope + `}}`
}

// issue gets a token by password and returns it with the answer.
func (e *env) issue(t *testing.T, user, password, project string) (string, *response) {
	t.Helper()
	r := e.do(t, "POST", "/identity/v3/auth/tokens", passwordAuth(user, password, project)).want(t, http.StatusCreated)
	return r.header.Get("X-Subject-Token"), r
}

// tokens caches the password-issued tokens of the seeded users: bcrypt
// is slow under the race detector. Any Service over srv verifies them.
var (
	tokensMu sync.Mutex
	tokens   = map[string]string{}
)

func (e *env) token(t *testing.T, user, project string) string {
	t.Helper()
	tokensMu.Lock()
	defer tokensMu.Unlock()
	key := user + "/" + project
	if tok, ok := tokens[key]; ok {
		return tok
	}
	tok, _ := e.issue(t, user, user, project)
	tokens[key] = tok
	return tok
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// userID looks a user up by name through the servers.
func userID(t *testing.T, name string) string {
	t.Helper()
	var resp structs.IdentityListResponse
	if err := srv.RPC("Identity.List", &structs.IdentityListRequest{Kind: structs.IdentityKindUsers, Name: name}, &resp); err != nil || len(resp.Users) != 1 {
		t.Fatalf("user %s: %v", name, err)
	}
	return resp.Users[0].ID
}
