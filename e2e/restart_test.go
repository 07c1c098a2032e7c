package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClientKilledMidSpawnNeitherLosesNorDuplicates SIGKILLs a client
// agent while its fake hypervisor is still spawning an instance, restarts
// it on the same data dir, and checks the instance ends ACTIVE, once.
func TestClientKilledMidSpawnNeitherLosesNorDuplicates(t *testing.T) {
	t.Parallel()
	srv := startAgent(t, "srv", "--server", "--bootstrap-expect", "1")
	cfgDir := t.TempDir()
	cfg := filepath.Join(cfgDir, "client.hcl")
	if err := os.WriteFile(cfg, []byte("client {\n  fake_spawn_latency = \"3s\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	client := startAgent(t, "hv1", "--client", "--config", cfg, "--join", srv.gossip)
	eventually(t, "host up", 30*time.Second, func() error {
		if out, _, _ := cli(t, srv.http, "host", "status", "hv1"); !strings.Contains(out, "up") {
			return fmt.Errorf("host:\n%s", out)
		}
		return nil
	})
	if _, errOut, code := cli(t, srv.http, "flavor", "create", "-id", "1", "-vcpus", "1", "-ram", "256", "m1.tiny"); code != 0 {
		t.Fatal(errOut)
	}
	out, errOut, code := cli(t, srv.http, "instance", "create", "-detach", "-flavor", "m1.tiny", "-image", "cirros", "-json", "vm")
	if code != 0 {
		t.Fatalf("create: %s", errOut)
	}
	var created struct{ Instances []struct{ ID string } }
	if err := json.Unmarshal([]byte(out), &created); err != nil || len(created.Instances) != 1 {
		t.Fatalf("create -json %q: %v", out, err)
	}
	id := created.Instances[0].ID
	eventually(t, "spawning", 30*time.Second, func() error {
		if out, _, _ := cli(t, srv.http, "instance", "status", id); !strings.Contains(out, "spawning") {
			return fmt.Errorf("status:\n%s", out)
		}
		return nil
	})
	client.kill()

	startAgentIn(t, "hv1", client.dataDir, "--client", "--config", cfg, "--join", srv.gossip)
	eventually(t, "ACTIVE after the restart", 60*time.Second, func() error {
		if out, _, _ := cli(t, srv.http, "instance", "status", id); !strings.Contains(out, "ACTIVE") {
			return fmt.Errorf("status:\n%s", out)
		}
		return nil
	})
	raw, err := os.ReadFile(filepath.Join(client.dataDir, "client", "fake-hypervisor.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), `"ID":"`+id+`"`); n != 1 {
		t.Fatalf("the hypervisor holds %d copies of %s:\n%s", n, id, raw)
	}
}
