package command

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent"
	"github.com/stratus-cloud/stratus/api"
)

// aclAgent starts an agent with ACLs on: a dev agent (seeded users) or,
// with prod, a server with no users at all.
func aclAgent(t *testing.T, prod bool) string {
	t.Helper()
	zero, on := 0, true
	cfg := &agent.Config{DevMode: !prod, NodeName: "cmd-acl", DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Ports: &agent.PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero}, ACL: &agent.ACLConfig{Enabled: &on}}
	if prod {
		cfg.Server = &agent.ServerConfig{Enabled: true, BootstrapExpect: 1}
	}
	if err := cfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(cfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Error}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	return "http://" + a.HTTPAddr()
}

// isolateCredentials points the token file at a temporary directory and
// clears every credential variable.
func isolateCredentials(t *testing.T, addr string) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv(api.EnvAddress, addr)
	for _, v := range []string{api.EnvToken, api.EnvOSToken, api.EnvOSUsername, api.EnvOSPassword, api.EnvOSProjectName,
		api.EnvOSUserDomain, api.EnvOSProjectDomain} {
		t.Setenv(v, "")
	}
}

// eventuallyOK retries a command until it succeeds (the dev seeds and the
// leader take a moment) and returns its output.
func eventuallyOK(t *testing.T, args ...string) string {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, errOut, code := run(t, args...)
		if code == 0 {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("cloudctl %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitForLogin waits until the identity service accepts the user (dev
// mode seeds users a moment after start).
func waitForLogin(t *testing.T, addr, user, password string) {
	t.Helper()
	c, err := api.NewClient(&api.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		_, err := c.Login(api.Credentials{User: user, Password: password})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("log in as %s: %v", user, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitForReady waits until the dev agent at addr says it is ready.
func waitForReady(t *testing.T, addr string) {
	t.Helper()
	resp, err := http.Get(addr + "/v1/status/ready?wait=90s")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("dev agent not ready: %d", resp.StatusCode)
	}
}

// TestLoginLogout: login saves a token the next commands use, a member
// is refused admin commands, logout revokes it, and openrc variables
// log in on their own.
func TestLoginLogout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	addr := aclAgent(t, false)
	isolateCredentials(t, addr)

	_, errOut, code := run(t, "flavor", "list")
	if code == 0 || !strings.Contains(errOut, "401") {
		t.Fatalf("flavor list without a token: exit %d, %s", code, errOut)
	}
	waitForLogin(t, addr, "demo", "demo")
	// A login works once the identity is seeded; the flavors come later.
	waitForReady(t, addr)
	stdin = strings.NewReader("demo\n")
	t.Cleanup(func() { stdin = os.Stdin })
	out := runOK(t, "login", "-user", "demo", "-password-stdin")
	assertContains(t, "login", out, "Logged in as demo on project demo", "Token saved in")
	path, _ := api.TokenFile()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v %v", path, fi, err)
	}
	assertContains(t, "flavor list", runOK(t, "flavor", "list"), "m1.tiny")
	if _, errOut, code := run(t, "host", "list"); code == 0 || !strings.Contains(errOut, "403") {
		t.Errorf("member host list: exit %d, %s", code, errOut)
	}
	saved := api.LoadToken(addr)
	if saved == nil || saved.User != "demo" {
		t.Fatalf("saved token %+v", saved)
	}
	assertContains(t, "logout", runOK(t, "logout"), "Logged out")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("token file after logout: %v", err)
	}
	// The revoked token is refused even when given explicitly.
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, errOut, code := run(t, "flavor", "list", "-token", saved.Token)
		if code != 0 && strings.Contains(errOut, "401") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("revoked token still accepted: exit %d %s", code, errOut)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// An openrc's variables log in by themselves.
	t.Setenv(api.EnvOSUsername, "admin")
	t.Setenv(api.EnvOSPassword, "admin")
	t.Setenv(api.EnvOSProjectName, "admin")
	assertContains(t, "host list with an openrc", runOK(t, "host", "list"), "cmd-acl")
	t.Setenv(api.EnvOSPassword, "wrong")
	if _, errOut, code := run(t, "host", "list"); code == 0 || !strings.Contains(errOut, "log in as admin") {
		t.Errorf("wrong openrc password: exit %d, %s", code, errOut)
	}
}

// TestOperatorBootstrap: a cluster without users gets its first admin
// once; the printed password logs in.
func TestOperatorBootstrap(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	addr := aclAgent(t, true)
	isolateCredentials(t, addr)
	out := eventuallyOK(t, "operator", "bootstrap")
	assertContains(t, "bootstrap", out, "User:      admin", "Password:", "cloudctl login -user admin -password-stdin")
	var password string
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "Password:  "); ok {
			password = p
		}
	}
	if len(password) < 24 {
		t.Fatalf("password %q in %s", password, out)
	}
	if _, errOut, code := run(t, "operator", "bootstrap"); code == 0 || !strings.Contains(errOut, "already bootstrapped") {
		t.Errorf("second bootstrap: exit %d, %s", code, errOut)
	}
	stdin = strings.NewReader(password + "\n")
	t.Cleanup(func() { stdin = os.Stdin })
	runOK(t, "login", "-user", "admin", "-password-stdin")
	out = runOK(t, "operator", "raft", "list-peers")
	assertContains(t, "list-peers", out, "cmd-acl")
	if _, err := os.Stat(filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "cloudctl", "token")); err != nil {
		t.Error(err)
	}
}
