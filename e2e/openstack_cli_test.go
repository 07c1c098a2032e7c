package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// requireCLI finds a Debian OpenStack client. Under CI=true a missing
// client fails the test instead of skipping it.
func requireCLI(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI (scripts/ci-deps.sh installs python3-openstackclient and python3-novaclient): %v", name, err)
		}
		t.Skipf("%s not installed; run scripts/ci-deps.sh", name)
	}
	return path
}

// osEnv is the environment `cloudctl openrc --user USER` exports.
func osEnv(t *testing.T, agentHTTP, user string) []string {
	t.Helper()
	out, errOut, code := cli(t, agentHTTP, "openrc", "--user", user)
	if code != 0 {
		t.Fatalf("cloudctl openrc: %s", errOut)
	}
	env := os.Environ()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		kv, ok := strings.CutPrefix(line, "export ")
		if !ok {
			t.Fatalf("openrc line %q", line)
		}
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, k+"="+strings.Trim(v, "'"))
	}
	return env
}

func runOS(t *testing.T, bin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runCmd(t, bin, env, args...)
}

func mustOS(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	out, errOut, code := runOS(t, bin, env, args...)
	if code != 0 {
		t.Fatalf("openstack %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// TestOpenStackCLIAgainstDevAgent drives a dev agent with the real
// python-openstackclient and novaclient, as a user following the docs
// would.
func TestOpenStackCLIAgainstDevAgent(t *testing.T) {
	t.Parallel()
	bin := requireCLI(t, "openstack")
	nova := requireCLI(t, "nova")
	dev := startAgent(t, "osdev", "--dev")
	env := osEnv(t, dev.http, "admin")
	eventually(t, "identity seeded", 30*time.Second, func() error {
		if _, errOut, code := runOS(t, bin, env, "token", "issue", "-f", "json"); code != 0 {
			return fmt.Errorf("token issue: %s", errOut)
		}
		return nil
	})
	var tok struct {
		ID        string `json:"id"`
		ProjectID string `json:"project_id"`
	}
	if err := json.Unmarshal([]byte(mustOS(t, bin, env, "token", "issue", "-f", "json")), &tok); err != nil || tok.ID == "" {
		t.Fatalf("token issue -f json: %v", err)
	}
	if out := mustOS(t, bin, env, "flavor", "list", "-f", "value", "-c", "Name"); !strings.Contains(out, "m1.tiny") {
		t.Fatalf("flavor list: %s", out)
	}
	if out := mustOS(t, bin, env, "keypair", "create", "ops"); !strings.Contains(out, "PRIVATE KEY") {
		t.Fatalf("keypair create printed no private key: %s", out)
	}
	if out := mustOS(t, bin, env, "keypair", "list", "-f", "value", "-c", "Name"); !strings.Contains(out, "ops") {
		t.Fatalf("keypair list: %s", out)
	}
	if out := mustOS(t, bin, env, "hypervisor", "list", "-f", "value"); !strings.Contains(out, "osdev") {
		t.Fatalf("hypervisor list: %s", out)
	}
	mustOS(t, bin, env, "quota", "show", "-f", "json")
	if out := mustOS(t, bin, env, "limits", "show", "--absolute", "-f", "value"); !strings.Contains(out, "maxTotalInstances") {
		t.Fatalf("limits show: %s", out)
	}

	// `openstack server create` resolves its image through the image
	// service, which arrives with the Images issue; boot through the
	// Compute API with the token the CLI issued, then drive the server
	// with the CLI.
	body := `{"server":{"name":"cli-vm","imageRef":"cirros","flavorRef":"1","key_name":"ops"}}`
	req, _ := http.NewRequest("POST", dev.http+"/compute/v2.1/servers", strings.NewReader(body))
	req.Header.Set("X-Auth-Token", tok.ID)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ Server struct{ ID string } }
	_ = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if resp.StatusCode != 202 || created.Server.ID == "" {
		t.Fatalf("boot: %d %+v", resp.StatusCode, created)
	}
	id := created.Server.ID
	// openstackclient builds an image-service client for every server
	// command, and the image service arrives with the Images issue; the
	// server commands below use novaclient, which does not.
	waitStatus := func(want string) {
		t.Helper()
		eventually(t, "server "+want, 60*time.Second, func() error {
			out, errOut, code := runOS(t, nova, env, "show", id)
			if code != 0 || !strings.Contains(out, "| status ") || !strings.Contains(out, want) {
				return fmt.Errorf("nova show: %s %s", out, errOut)
			}
			return nil
		})
	}
	waitStatus("ACTIVE")
	if out := mustOS(t, nova, env, "list"); !strings.Contains(out, "cli-vm") {
		t.Fatalf("nova list: %s", out)
	}
	mustOS(t, nova, env, "reboot", id)
	waitStatus("ACTIVE")
	mustOS(t, nova, env, "stop", id)
	waitStatus("SHUTOFF")
	mustOS(t, nova, env, "start", id)
	waitStatus("ACTIVE")

	// The demo user cannot see the admin project's server.
	demo := osEnv(t, dev.http, "demo")
	if _, _, code := runOS(t, nova, demo, "show", id); code == 0 {
		t.Fatal("demo saw another project's server")
	}
	mustOS(t, nova, env, "delete", id)
	eventually(t, "server deleted", 60*time.Second, func() error {
		if _, _, code := runOS(t, nova, env, "show", id); code == 0 {
			return fmt.Errorf("still shown")
		}
		return nil
	})
}
