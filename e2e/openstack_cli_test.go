package e2e

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	// A clouds.yaml from cloudctl serves the CLI as well as the exports.
	yaml, errOut, code := cli(t, dev.http, "openrc", "-format", "clouds-yaml", "-cloud", "lab")
	if code != 0 {
		t.Fatalf("openrc -format clouds-yaml: %s", errOut)
	}
	cloudsFile := filepath.Join(t.TempDir(), "clouds.yaml")
	if err := os.WriteFile(cloudsFile, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var cloudEnv []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OS_") {
			cloudEnv = append(cloudEnv, kv)
		}
	}
	cloudEnv = append(cloudEnv, "OS_CLIENT_CONFIG_FILE="+cloudsFile)
	if out := mustOS(t, bin, cloudEnv, "--os-cloud", "lab", "flavor", "list", "-f", "value", "-c", "Name"); !strings.Contains(out, "m1.tiny") {
		t.Fatalf("flavor list through clouds.yaml: %s", out)
	}
	// The catalog as Keystone's resources (issue #32).
	if out := mustOS(t, bin, env, "service", "list", "-f", "value", "-c", "Type"); !strings.Contains(out, "compute") || !strings.Contains(out, "network") {
		t.Fatalf("service list: %s", out)
	}
	if out := mustOS(t, bin, env, "endpoint", "list", "--service", "compute", "--interface", "public", "-f", "value", "-c", "URL"); !strings.Contains(out, "/compute/v2.1") {
		t.Fatalf("endpoint list: %s", out)
	}
	if out := mustOS(t, bin, env, "region", "list", "-f", "value", "-c", "Region"); !strings.Contains(out, "RegionOne") {
		t.Fatalf("region list: %s", out)
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

	// Images: upload a file, list, show, download it again.
	dir := t.TempDir()
	data := make([]byte, 3<<20+7)
	for i := range data {
		data[i] = byte(i * 31)
	}
	file := filepath.Join(dir, "disk.raw")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(data)
	var created map[string]any
	if err := json.Unmarshal([]byte(mustOS(t, bin, env, "image", "create", "--file", file, "--disk-format", "raw",
		"--container-format", "bare", "--property", "os_distro=debian", "--public", "cli-img", "-f", "json")), &created); err != nil {
		t.Fatalf("image create -f json: %v", err)
	}
	imageID, _ := created["id"].(string)
	if imageID == "" {
		t.Fatalf("image create: %v", created)
	}
	if out := mustOS(t, bin, env, "image", "list", "-f", "value", "-c", "Name", "-c", "Status"); !strings.Contains(out, "cli-img active") ||
		!strings.Contains(out, "cirros active") {
		t.Fatalf("image list: %s", out)
	}
	var shown map[string]any
	if err := json.Unmarshal([]byte(mustOS(t, bin, env, "image", "show", "cli-img", "-f", "json")), &shown); err != nil {
		t.Fatal(err)
	}
	if shown["status"] != "active" || shown["checksum"] != hex.EncodeToString(sum[:]) || shown["size"] != float64(len(data)) ||
		shown["disk_format"] != "raw" || shown["visibility"] != "public" {
		t.Fatalf("image show: %v", shown)
	}
	saved := filepath.Join(dir, "saved.raw")
	mustOS(t, bin, env, "image", "save", "--file", saved, "cli-img")
	if got, _ := os.ReadFile(saved); !bytes.Equal(got, data) {
		t.Fatalf("image save: %d bytes", len(got))
	}
	mustOS(t, bin, env, "image", "set", "--property", "hw_architecture=x86_64", "--tag", "cli", "cli-img")
	if out := mustOS(t, bin, env, "image", "show", "cli-img", "-f", "value", "-c", "tags"); !strings.Contains(out, "cli") {
		t.Fatalf("image set: %s", out)
	}
	// demo sees the public image but cannot change it.
	demo := osEnv(t, dev.http, "demo")
	if out := mustOS(t, bin, demo, "image", "list", "-f", "value", "-c", "Name"); !strings.Contains(out, "cli-img") {
		t.Fatalf("demo's image list: %s", out)
	}
	if _, _, code := runOS(t, bin, demo, "image", "delete", "cli-img"); code == 0 {
		t.Fatal("demo deleted the admin's image")
	}

	// `openstack server create` resolves its image (by name) through the
	// image service; so does `nova boot`.
	out := mustOS(t, bin, env, "server", "create", "--image", "cirros", "--flavor", "m1.tiny", "--key-name", "ops", "cli-vm", "-f", "json")
	var server struct {
		ID    string `json:"id"`
		Image string `json:"image"`
	}
	if err := json.Unmarshal([]byte(out), &server); err != nil || server.ID == "" {
		t.Fatalf("server create: %v %s", err, out)
	}
	id := server.ID
	if out, _, code := runOS(t, bin, env, "server", "create", "--image", "no-such-image", "--flavor", "m1.tiny", "nope"); code == 0 {
		t.Fatalf("server create with a missing image: %s", out)
	}
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
	// Consoles: the log (os-getConsoleOutput) and a noVNC URL
	// (remote-consoles).
	if out := mustOS(t, bin, env, "console", "log", "show", "--lines", "2", id); !strings.Contains(out, "login:") {
		t.Fatalf("console log show: %s", out)
	}
	if out := mustOS(t, bin, env, "console", "url", "show", "--novnc", id, "-f", "value", "-c", "url"); !strings.Contains(out, "/ui/vendor/novnc/vnc_lite.html?path=console%2Fwebsockify%3Ftoken%3D") {
		t.Fatalf("console url show: %s", out)
	}

	// Nova's extension list, as the CLI reads it.
	if out := mustOS(t, bin, env, "extension", "list", "--compute", "-f", "value", "-c", "Alias"); !strings.Contains(out, "os-server-external-events") ||
		strings.Count(out, "\n") < 98 {
		t.Fatalf("extension list --compute: %s", out)
	}

	if out := mustOS(t, bin, env, "server", "show", id, "-f", "value", "-c", "image"); !strings.Contains(out, "cirros") {
		t.Fatalf("server show image: %s", out)
	}
	// nova boot looks its image up in the image service.
	if out := mustOS(t, nova, env, "boot", "--image", "cirros", "--flavor", "m1.tiny", "nova-vm"); !strings.Contains(out, "nova-vm") {
		t.Fatalf("nova boot: %s", out)
	}

	// Usage (os-simple-tenant-usage, the last four weeks): every project's
	// for the admin, at 2.1 and with 2.40's paging; one project's for its
	// members, and the list is the admin's alone.
	type usageRow struct {
		Project string           `json:"Project"`
		Servers []map[string]any `json:"Servers"`
	}
	for _, version := range []string{"2.1", "2.40"} {
		var rows []usageRow
		out := mustOS(t, bin, env, "--os-compute-api-version", version, "usage", "list", "-f", "json")
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 || rows[0].Project != tok.ProjectID || len(rows[0].Servers) == 0 {
			t.Fatalf("usage list at %s: %v %s", version, err, out)
		}
	}
	var usageShown usageRow
	if out := mustOS(t, bin, env, "usage", "show", "-f", "json"); json.Unmarshal([]byte(out), &usageShown) != nil ||
		usageShown.Project != tok.ProjectID || len(usageShown.Servers) == 0 || usageShown.Servers[0]["state"] != "active" {
		t.Fatalf("usage show: %s", out)
	}
	demoEnv := osEnv(t, dev.http, "demo")
	if out, errOut, code := runOS(t, bin, demoEnv, "usage", "list"); code == 0 || !strings.Contains(errOut+out, "403") {
		t.Fatalf("demo's usage list: exit %d %s %s", code, out, errOut)
	}
	if _, errOut, code := runOS(t, bin, demoEnv, "usage", "show", "--project", tok.ProjectID); code == 0 {
		t.Fatalf("demo read the admin project's usage: %s", errOut)
	}
	mustOS(t, bin, demoEnv, "usage", "show", "-f", "json")

	// The demo user cannot see the admin project's server.
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
	mustOS(t, bin, env, "image", "delete", "cli-img")
	if _, _, code := runOS(t, bin, env, "image", "show", imageID); code == 0 {
		t.Fatal("image still shown after delete")
	}
	testOpenStackCLINetworking(t, bin, env)
}
