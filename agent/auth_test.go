package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// call sends one request with an optional token and returns the status
// and body.
func call(t *testing.T, method, url, token, body string) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Stratus-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func aclAgent(t *testing.T) *Agent {
	on := true
	return testAgent(t, func(c *Config) { c.ACL = &ACLConfig{Enabled: &on} })
}

// TestNativeAPIRequiresTokens: with ACLs on, every non-public route
// refuses a request without a token, or with a forged or revoked one,
// as 401 in the native error format, and public routes stay open.
func TestNativeAPIRequiresTokens(t *testing.T) {
	a := aclAgent(t)
	for _, path := range []string{"/v1/instances", "/v1/hosts", "/v1/flavors", "/v1/operator/raft/configuration", "/v1/watch/instances"} {
		code, h, body := call(t, "GET", a.url(path), "", "")
		if code != http.StatusUnauthorized || !strings.Contains(string(body), `"kind":"unauthenticated"`) || h.Get("WWW-Authenticate") == "" {
			t.Errorf("GET %s without a token: %d %s %v", path, code, body, h)
		}
	}
	if code, _, body := call(t, "GET", a.url("/v1/status/leader"), "", ""); code != http.StatusOK {
		t.Errorf("public status/leader: %d %s", code, body)
	}
	admin := keystoneToken(t, a, "admin")
	forged := admin[:len(admin)-4] + "AAAA"
	if forged == admin {
		forged = admin[:len(admin)-4] + "BBBB"
	}
	for _, tok := range []string{forged, "v1.garbage", "not-a-token"} {
		if code, _, body := call(t, "GET", a.url("/v1/hosts"), tok, ""); code != http.StatusUnauthorized {
			t.Errorf("forged token %q: %d %s", tok[:10], code, body)
		}
	}
	if code, _, body := call(t, "GET", a.url("/v1/hosts"), admin, ""); code != http.StatusOK {
		t.Fatalf("admin token: %d %s", code, body)
	}
	// Any of the three headers carries it.
	for _, h := range [][2]string{{"X-Auth-Token", admin}, {"Authorization", "Bearer " + admin}} {
		req, _ := http.NewRequest("GET", a.url("/v1/hosts"), nil)
		req.Header.Set(h[0], h[1])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("token in %s: %d", h[0], resp.StatusCode)
		}
	}
	// A revoked token stops working on every agent once the revocation
	// is replicated.
	req, _ := http.NewRequest("DELETE", a.url("/identity/v3/auth/tokens"), nil)
	req.Header.Set("X-Auth-Token", admin)
	req.Header.Set("X-Subject-Token", admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	waitFor(t, "revoked token refused", func() error {
		if code, _, _ := call(t, "GET", a.url("/v1/hosts"), admin, ""); code != http.StatusUnauthorized {
			return fmt.Errorf("status %d", code)
		}
		return nil
	})
}

// TestNativeAPIPolicy: a member reaches its project's instances and no
// admin route; other projects' instances do not exist for it.
func TestNativeAPIPolicy(t *testing.T) {
	a := aclAgent(t)
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")
	for _, rt := range []string{"GET /v1/hosts", "GET /v1/allocations", "GET /v1/evaluations", "GET /v1/agent/self",
		"GET /v1/operator/raft/configuration", "GET /v1/operator/snapshot", "POST /v1/flavors", "GET /v1/networks",
		"GET /v1/migrations", "GET /v1/groups", "GET /v1/images", "GET /v1/s3/credentials", "GET /v1/agent/keyring/list",
		"PUT /v1/operator/scheduler/configuration", "POST /v1/hosts/x/disable"} {
		method, path, _ := strings.Cut(rt, " ")
		code, _, body := call(t, method, a.url(path), demo, "")
		if code != http.StatusForbidden || !strings.Contains(string(body), "admin role") {
			t.Errorf("member %s: %d %s", rt, code, body)
		}
	}
	if code, _, body := call(t, "GET", a.url("/v1/flavors"), demo, ""); code != http.StatusOK {
		t.Errorf("member flavor list: %d %s", code, body)
	}
	boot := func(token, name string) *structs.Instance {
		t.Helper()
		code, _, body := call(t, "POST", a.url("/v1/instances"), token, fmt.Sprintf(`{"Name":%q,"Flavor":"m1.tiny","Image":"cirros"}`, name))
		if code != http.StatusOK {
			t.Fatalf("boot %s: %d %s", name, code, body)
		}
		var out struct{ Instances []*structs.Instance }
		if err := json.Unmarshal(body, &out); err != nil || len(out.Instances) != 1 {
			t.Fatalf("boot %s: %v %s", name, err, body)
		}
		return out.Instances[0]
	}
	mine, theirs := boot(demo, "demo-vm"), boot(admin, "admin-vm")
	if mine.ProjectID == "" || mine.ProjectID == theirs.ProjectID || mine.UserID == "" {
		t.Fatalf("owners: demo's %q/%q, admin's %q", mine.ProjectID, mine.UserID, theirs.ProjectID)
	}
	list := func(token string) map[string]bool {
		code, _, body := call(t, "GET", a.url("/v1/instances"), token, "")
		if code != http.StatusOK {
			t.Fatalf("list: %d %s", code, body)
		}
		var out []*structs.Instance
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, i := range out {
			ids[i.ID] = true
		}
		return ids
	}
	if got := list(demo); !got[mine.ID] || got[theirs.ID] {
		t.Errorf("member sees %v", got)
	}
	if got := list(admin); !got[mine.ID] || !got[theirs.ID] {
		t.Errorf("admin sees %v", got)
	}
	for _, rt := range []string{"GET /v1/instances/%s", "GET /v1/instances/%s/actions", "DELETE /v1/instances/%s",
		"POST /v1/instances/%s/actions", "POST /v1/instances/%s/snapshot", "GET /v1/instances/%s/console-output"} {
		method, path, _ := strings.Cut(fmt.Sprintf(rt, theirs.ID), " ")
		code, _, body := call(t, method, a.url(path), demo, `{"Op":"stop"}`)
		if code != http.StatusNotFound {
			t.Errorf("member %s on another project's instance: %d %s", method+" "+path, code, body)
		}
	}
	if code, _, body := call(t, "GET", a.url("/v1/instances/"+mine.ID), demo, ""); code != http.StatusOK {
		t.Errorf("member reads its own instance: %d %s", code, body)
	}
	if code, _, body := call(t, "DELETE", a.url("/v1/instances/"+mine.ID), demo, ""); code != http.StatusOK {
		t.Errorf("member deletes its own instance: %d %s", code, body)
	}
	// Dev mode seeds users, so there is nothing to bootstrap.
	if code, _, body := call(t, "POST", a.url("/v1/operator/bootstrap"), "", ""); code != http.StatusConflict {
		t.Errorf("bootstrap of a seeded cluster: %d %s", code, body)
	}
}

// TestBootstrapOnce: a production server starts with ACLs on and no
// users; bootstrap creates the first admin exactly once, and its
// credentials work.
func TestBootstrapOnce(t *testing.T) {
	zero := 0
	cfg := &Config{NodeName: "prod", DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Ports:  &PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
		Server: &ServerConfig{Enabled: true, BootstrapExpect: 1}}
	if err := cfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	if !cfg.ACLEnabled() {
		t.Fatal("ACLs are off by default outside dev mode")
	}
	a, err := New(cfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	if code, _, body := call(t, "GET", a.url("/v1/flavors"), "", ""); code != http.StatusUnauthorized {
		t.Errorf("no token on a production agent: %d %s", code, body)
	}
	var boot bootstrapJSON
	waitFor(t, "bootstrap", func() error {
		code, _, body := call(t, "POST", a.url("/v1/operator/bootstrap"), "", "")
		if code != http.StatusOK {
			return fmt.Errorf("%d %s", code, body)
		}
		return json.Unmarshal(body, &boot)
	})
	if boot.UserName != "admin" || len(boot.Password) < 24 || boot.ProjectName != "admin" {
		t.Fatalf("bootstrap answer %+v", boot)
	}
	if code, _, body := call(t, "POST", a.url("/v1/operator/bootstrap"), "", ""); code != http.StatusConflict ||
		!strings.Contains(string(body), "already bootstrapped") {
		t.Errorf("second bootstrap: %d %s", code, body)
	}
	body := fmt.Sprintf(`{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"admin","domain":{"id":"default"},"password":%q}}},
		"scope":{"project":{"name":"admin","domain":{"id":"default"}}}}}`, boot.Password)
	resp, err := http.Post(a.url("/identity/v3/auth/tokens"), "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("login with the bootstrap password: %d", resp.StatusCode)
	}
	token := resp.Header.Get("X-Subject-Token")
	if code, _, body := call(t, "GET", a.url("/v1/operator/raft/configuration"), token, ""); code != http.StatusOK {
		t.Errorf("bootstrap admin on an admin route: %d %s", code, body)
	}
}
