package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/structs"
)

// TestGossipKeyRotationReachesClientAgents rotates the gossip key through
// the HTTP API of a server agent: a client agent follows every step,
// stays a member, keeps the new keyring in its data dir and rejoins
// with it after a restart; a newcomer with only the old key is refused.
func TestGossipKeyRotationReachesClientAgents(t *testing.T) {
	oldKey := gossip.EncodeKey([]byte("0123456789abcdef0123456789abcdef"))
	newKey := gossip.EncodeKey([]byte("fedcba9876543210fedcba9876543210"))
	srv := testAgent(t, func(c *Config) { c.Encrypt = oldKey })
	clientDir := t.TempDir()
	startClient := func(name, dir string) (*Agent, error) {
		zero := 0
		cfg := &Config{NodeName: name, DataDir: dir, BindAddr: "127.0.0.1", Encrypt: oldKey,
			Ports:  &PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
			Client: &ClientConfig{Enabled: true, RetryJoin: []string{srv.GossipAddr()}}}
		if err := cfg.Finalize(); err != nil {
			t.Fatal(err)
		}
		a, err := New(cfg, hclog.NewNullLogger())
		if err == nil {
			t.Cleanup(func() { _ = a.Shutdown() })
		}
		return a, err
	}
	client, err := startClient("rot-client", clientDir)
	if err != nil {
		t.Fatal(err)
	}
	alive := func(name string) func() error {
		return func() error {
			for _, m := range srv.gossip.Members() {
				if m.Name == name && m.Status == gossip.StatusAlive {
					return nil
				}
			}
			return fmt.Errorf("%s is not an alive member", name)
		}
	}
	waitForLong(t, "the client in the pool", alive("rot-client"))

	keyring := func(method, path, body string) structs.KeyringResponse {
		t.Helper()
		code, _, raw := do(t, method, srv.url(path), strings.NewReader(body))
		if code != 200 {
			t.Fatalf("%s %s: %d %s", method, path, code, raw)
		}
		var out structs.KeyringResponse
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		if out.Members != 2 || out.Responses != 2 || len(out.Errors) != 0 {
			t.Fatalf("%s: %+v", path, out)
		}
		return out
	}
	keyring("POST", "/v1/agent/keyring/install", `{"Key":"`+newKey+`"}`)
	keyring("POST", "/v1/agent/keyring/use", `{"Key":"`+newKey+`"}`)
	keyring("POST", "/v1/agent/keyring/remove", `{"Key":"`+oldKey+`"}`)
	list := keyring("GET", "/v1/agent/keyring/list", "")
	if list.Keys[newKey] != 2 || list.PrimaryKeys[newKey] != 2 || len(list.Keys) != 1 {
		t.Fatalf("after rotation: %+v", list)
	}
	if err := alive("rot-client")(); err != nil {
		t.Fatalf("the client was lost during the rotation: %v", err)
	}
	if code, _, raw := do(t, "POST", srv.url("/v1/agent/keyring/remove"), strings.NewReader(`{"Key":"`+newKey+`"}`)); code != 400 {
		t.Fatalf("removing the key in use: %d %s", code, raw)
	}

	// The client keeps the new keyring and rejoins with it after a
	// restart, although its configuration still names the old key.
	data, err := os.ReadFile(filepath.Join(clientDir, "gossip.keyring"))
	if err != nil || !strings.Contains(string(data), newKey) || strings.Contains(string(data), oldKey) {
		t.Fatalf("client keyring file = %q, %v", data, err)
	}
	if err := client.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, err := startClient("rot-client", clientDir); err != nil {
		t.Fatal(err)
	}
	waitForLong(t, "the restarted client back in the pool", alive("rot-client"))

	// A newcomer with only the old key cannot join.
	stale, err := startClient("rot-stale", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if n, err := stale.gossip.Join([]string{srv.GossipAddr()}); err == nil {
		t.Fatalf("a member with the removed key joined (%d)", n)
	}
}

// waitForLong is waitFor with room for a loaded machine: gossip failure
// detection and rejoins take seconds, more under the race detector.
func waitForLong(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
