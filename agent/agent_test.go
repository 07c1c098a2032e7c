package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/rpc/rpctest"
	"github.com/stratus-cloud/stratus/structs"
)

// testAgent starts a dev agent on random loopback ports and waits for
// its flavors and its host.
func testAgent(t *testing.T, tweak func(*Config)) *Agent {
	t.Helper()
	a := startDevAgent(t, tweak)
	waitDevAgentReady(t, a)
	return a
}

// startDevAgent starts a dev agent on random loopback ports, without
// waiting for anything.
func startDevAgent(t *testing.T, tweak func(*Config)) *Agent {
	t.Helper()
	return startDevAgentLogged(t, tweak, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn}))
}

// startDevAgentLogged is startDevAgent logging to logger.
func startDevAgentLogged(t *testing.T, tweak func(*Config), logger hclog.Logger) *Agent {
	t.Helper()
	zero := 0
	cfg := &Config{
		DevMode:  true,
		NodeName: "test",
		DataDir:  t.TempDir(),
		BindAddr: "127.0.0.1",
		Ports:    &PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
	}
	if tweak != nil {
		tweak(cfg)
	}
	if err := cfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	a, err := New(cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	return a
}

// waitDevAgentReady waits for a dev agent's flavors and its host.
func waitDevAgentReady(t *testing.T, a *Agent) {
	t.Helper()
	cfg := a.config
	var token string
	if cfg.ACLEnabled() {
		token = keystoneToken(t, a, "admin")
	}
	waitFor(t, "seeded flavors", func() error {
		req, _ := http.NewRequest(http.MethodGet, a.url("/v1/flavors"), nil)
		req.Header.Set("X-Auth-Token", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var fl []*structs.Flavor
		if err := json.NewDecoder(resp.Body).Decode(&fl); err != nil {
			return err
		}
		if len(fl) != 5 {
			return fmt.Errorf("%d flavors", len(fl))
		}
		return nil
	})
	if cfg.Client == nil || cfg.Client.Driver == "" || cfg.Client.Driver == "fake" {
		// The flavors can be seeded before the host registers (its
		// registration backs off while there is no leader yet), and a
		// boot with no host up fails with "No valid host", as in Nova.
		waitFor(t, "the dev host up", func() error {
			req, _ := http.NewRequest(http.MethodGet, a.url("/v1/status/cluster"), nil)
			req.Header.Set("X-Auth-Token", token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			var c clusterStatusJSON
			if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
				return err
			}
			if c.Hosts.Up < 1 {
				return fmt.Errorf("hosts %+v", c.Hosts)
			}
			return nil
		})
	}
}

func (a *Agent) url(path string) string { return "http://" + a.HTTPAddr() + path }

func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func do(t *testing.T, method, url string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func TestDevAgentServesFlavorsAndStatus(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	code, hdr, body := do(t, "GET", a.url("/v1/flavors/m1.small"), nil)
	if code != 200 || hdr.Get("X-Stratus-Index") == "" || hdr.Get("X-Stratus-KnownLeader") != "true" {
		t.Fatalf("%d %v %s", code, hdr, body)
	}
	code, _, body = do(t, "POST", a.url("/v1/flavors"), strings.NewReader(`{"ID":"10","Name":"c1","VCPUs":2,"MemoryMB":256,"RootGB":5,"ExtraSpecs":{"resources:CUSTOM_FPGA":"1"}}`))
	if code != 200 || !strings.Contains(string(body), `"resources:CUSTOM_FPGA": "1"`) {
		t.Fatalf("create: %d %s", code, body)
	}
	code, _, _ = do(t, "POST", a.url("/v1/flavors"), strings.NewReader(`{"ID":"10","Name":"c2","VCPUs":2,"MemoryMB":256}`))
	if code != http.StatusConflict {
		t.Fatalf("duplicate id: %d", code)
	}
	if code, _, _ = do(t, "DELETE", a.url("/v1/flavors/10"), nil); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	if code, _, _ = do(t, "DELETE", a.url("/v1/flavors/10"), nil); code != 404 {
		t.Fatalf("second delete: %d", code)
	}
	for _, path := range []string{"/v1/status/leader", "/v1/status/peers", "/v1/agent/self", "/v1/agent/members", "/v1/operator/raft/configuration"} {
		if code, _, body = do(t, "GET", a.url(path), nil); code != 200 || len(body) < 3 {
			t.Fatalf("%s: %d %s", path, code, body)
		}
	}
	code, _, body = do(t, "GET", a.url("/v1/metrics"), nil)
	if code != 200 || !strings.Contains(string(body), "stratus_raft_leader 1") {
		t.Fatalf("metrics: %d %s", code, body)
	}
}

func TestBadInputGetsClearErrorsAndWritesNothing(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	huge := `{"ID":"h","Name":"h","VCPUs":1,"MemoryMB":1,"Description":"` + strings.Repeat("x", 2<<20) + `"}`
	cases := []struct {
		name, method, path, body string
		code                     int
	}{
		{"malformed json", "POST", "/v1/flavors", `{"ID":`, 400},
		{"not an object", "POST", "/v1/flavors", `[1,2]`, 400},
		{"unknown field", "POST", "/v1/flavors", `{"ID":"u","Name":"u","VCPUs":1,"MemoryMB":1,"Color":"red"}`, 400},
		{"wrong type", "POST", "/v1/flavors", `{"ID":"w","Name":"w","VCPUs":"two","MemoryMB":1}`, 400},
		{"trailing data", "POST", "/v1/flavors", `{"ID":"t","Name":"t","VCPUs":1,"MemoryMB":1} {}`, 400},
		{"empty body", "POST", "/v1/flavors", ``, 400},
		{"invalid values", "POST", "/v1/flavors", `{"ID":"v","Name":" v","VCPUs":-1,"MemoryMB":0}`, 400},
		{"duplicate name", "POST", "/v1/flavors", `{"ID":"d","Name":"m1.tiny","VCPUs":1,"MemoryMB":1}`, 409},
		{"huge body", "POST", "/v1/flavors", huge, 413},
		{"bad index", "GET", "/v1/flavors?index=abc", ``, 400},
		{"bad wait", "GET", "/v1/flavors?index=1&wait=forever", ``, 400},
		{"unknown route", "GET", "/v1/nothing", ``, 404},
		{"wrong method", "PATCH", "/v1/flavors", ``, 405},
		{"bad snapshot", "PUT", "/v1/operator/snapshot", `garbage`, 400},
		{"empty snapshot", "PUT", "/v1/operator/snapshot", ``, 400},
		{"peer without id", "DELETE", "/v1/operator/raft/peer", ``, 400},
	}
	for _, tc := range cases {
		code, _, body := do(t, tc.method, a.url(tc.path), strings.NewReader(tc.body))
		if code != tc.code {
			t.Errorf("%s: got %d (%s), want %d", tc.name, code, body, tc.code)
			continue
		}
		if true {
			var e httpError
			if err := json.Unmarshal(body, &e); err != nil || e.Error == "" || e.Kind == "" {
				t.Errorf("%s: error body %q is not {error, kind}", tc.name, body)
			}
		}
	}
	// Nothing of the bad requests was written.
	_, _, body := do(t, "GET", a.url("/v1/flavors"), nil)
	var fl []*structs.Flavor
	if err := json.Unmarshal(body, &fl); err != nil || len(fl) != 5 {
		t.Fatalf("flavors after bad input: %d %v", len(fl), err)
	}
}

func TestBlockingQueryOverHTTP(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	_, hdr, _ := do(t, "GET", a.url("/v1/flavors"), nil)
	index := hdr.Get("X-Stratus-Index")
	var wg sync.WaitGroup
	wg.Add(1)
	var got []*structs.Flavor
	var newIndex string
	go func() {
		defer wg.Done()
		_, h, body := do(t, "GET", a.url("/v1/flavors?wait=30s&index="+index), nil)
		newIndex = h.Get("X-Stratus-Index")
		_ = json.Unmarshal(body, &got)
	}()
	code, _, body := do(t, "POST", a.url("/v1/flavors"), bytes.NewReader([]byte(`{"ID":"77","Name":"late","VCPUs":1,"MemoryMB":64}`)))
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	wg.Wait()
	if len(got) != 6 || newIndex == index {
		t.Fatalf("blocking query returned %d flavors at index %s (was %s)", len(got), newIndex, index)
	}
}

func TestConfigFileAndErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := dir + "/agent.hcl"
	writeFile(t, path, `
name = "n1"
region = "r1"
data_dir = "`+dir+`"
ports {
  http = 0
}
server {
  enabled = true
  bootstrap_expect = 3
  max_heartbeats_per_second = 20
}
`)
	c, err := LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.NodeName != "n1" || c.Region != "r1" || !c.IsServer() || c.Server.BootstrapExpect != 3 || c.HTTPPort() != 0 || c.RPCPort() != DefaultRPCPort {
		t.Fatalf("parsed %+v", c)
	}
	if c.Server.MaxHeartbeatsPerSecond != 20 {
		t.Fatalf("max_heartbeats_per_second parsed as %v", c.Server.MaxHeartbeatsPerSecond)
	}
	writeFile(t, path, "data_dir = \""+dir+"\"\nserver {\n  enabled = true\n  max_heartbeats_per_second = -1\n}\n")
	neg, err := LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := neg.Finalize(); err == nil || !strings.Contains(err.Error(), "max_heartbeats_per_second") {
		t.Fatalf("negative max_heartbeats_per_second: error %v", err)
	}
	writeFile(t, path, "server {\n  enabled = true\n  colour = 1\n}\n")
	if _, err := LoadConfigFile(path); err == nil || !strings.Contains(err.Error(), path+":3") {
		t.Fatalf("unknown attribute error %v does not point at %s:3", err, path)
	}
	bad := &Config{NodeName: "x", DataDir: dir, BindAddr: "not-an-ip", Server: &ServerConfig{Enabled: true}}
	if err := bad.Finalize(); err == nil {
		t.Fatal("bad bind address accepted")
	}
	if err := (&Config{NodeName: "x"}).Finalize(); err == nil {
		t.Fatal("agent with no role accepted")
	}
}

func TestClientAgentReachesServersOverMutualTLS(t *testing.T) {
	t.Parallel()
	pki := rpctest.NewPKI(t)
	tlsFor := func(name string) *TLSConfig {
		cert, key := pki.Issue(t, name)
		return &TLSConfig{RPC: true, CAFile: pki.CAFile, CertFile: cert, KeyFile: key, VerifyIncoming: true}
	}
	srv := testAgent(t, func(c *Config) { c.TLS = tlsFor("server.global.stratus") })
	zero := 0
	ccfg := &Config{
		NodeName: "client1", DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Ports:  &PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
		Client: &ClientConfig{Enabled: true, RetryJoin: []string{srv.GossipAddr()}},
		TLS:    tlsFor("client.global.stratus"),
	}
	if err := ccfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	client, err := New(ccfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Shutdown() })
	// The client agent serves the API by forwarding to the server over
	// TLS, and verifies tokens with keys it fetched that way (its ACLs
	// are on, as outside dev mode).
	admin := keystoneToken(t, srv, "admin")
	waitFor(t, "client agent to reach the server", func() error {
		code, _, body := call(t, "GET", client.url("/v1/flavors/m1.large"), admin, "")
		if code != 200 {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	code, _, body := call(t, "POST", client.url("/v1/flavors"), admin, `{"ID":"tls","Name":"tls","VCPUs":1,"MemoryMB":64}`)
	if code != 200 {
		t.Fatalf("write through client agent: %d %s", code, body)
	}
	code, _, body = call(t, "GET", client.url("/v1/agent/members"), admin, "")
	if code != 200 || !strings.Contains(string(body), `"client1"`) {
		t.Fatalf("members: %s", body)
	}

	// A client without the cluster's certificates gets nowhere.
	plain := *ccfg
	plain.NodeName, plain.DataDir, plain.TLS = "intruder", t.TempDir(), nil
	off := false // so that its RPC, not its missing signing keys, is what fails
	plain.ACL = &ACLConfig{Enabled: &off}
	intruder, err := New(&plain, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = intruder.Shutdown() })
	waitFor(t, "intruder to see the server in gossip", func() error {
		if len(intruder.gossip.Servers("")) == 0 {
			return fmt.Errorf("no servers")
		}
		return nil
	})
	if code, _, _ := do(t, "GET", intruder.url("/v1/flavors"), nil); code != http.StatusServiceUnavailable {
		t.Fatalf("plaintext client got %d", code)
	}
}

func TestEncryptedGossip(t *testing.T) {
	t.Parallel()
	key := "c2VjcmV0LWtleS0xNi1ieQ==" // 16 bytes
	srv := testAgent(t, func(c *Config) { c.Encrypt = key })
	join := func(name, k string) *Agent {
		zero := 0
		cfg := &Config{NodeName: name, DataDir: t.TempDir(), BindAddr: "127.0.0.1", Encrypt: k,
			Ports:  &PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
			Client: &ClientConfig{Enabled: true, RetryJoin: []string{srv.GossipAddr()}}}
		if err := cfg.Finalize(); err != nil {
			t.Fatal(err)
		}
		a, err := New(cfg, hclog.NewNullLogger())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { _ = a.Shutdown() })
		return a
	}
	join("with-key", key)
	waitFor(t, "the keyed client in the pool", func() error {
		for _, m := range srv.gossip.Members() {
			if m.Name == "with-key" {
				return nil
			}
		}
		return fmt.Errorf("not joined")
	})
	bad := &Config{NodeName: "x", DataDir: t.TempDir(), Encrypt: "not base64!", Server: &ServerConfig{Enabled: true}}
	if err := bad.Finalize(); err == nil {
		t.Fatal("bad gossip key accepted")
	}
}
