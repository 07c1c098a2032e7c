package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestOpenStackCLIServerDiagnostics reads a fake server's diagnostics
// with the real clients: `openstack server show --diagnostics` (the
// pre-2.48 flat shape) and `nova diagnostics` at 2.48.
func TestOpenStackCLIServerDiagnostics(t *testing.T) {
	t.Parallel()
	bin := requireCLI(t, "openstack")
	nova := requireCLI(t, "nova")
	dev := startAgent(t, "osdiag", "--dev")
	env := osEnv(t, dev.http, "admin")
	var server struct {
		ID string `json:"id"`
	}
	eventually(t, "a server created", 60*time.Second, func() error {
		out, errOut, code := runOS(t, bin, env, "server", "create", "--image", "cirros", "--flavor", "m1.tiny", "diag-vm", "-f", "json")
		if code != 0 {
			return fmt.Errorf("server create: %s", errOut)
		}
		return json.Unmarshal([]byte(out), &server)
	})
	eventually(t, "server ACTIVE", 60*time.Second, func() error {
		out, errOut, code := runOS(t, bin, env, "server", "show", server.ID, "-f", "value", "-c", "status")
		if code != 0 || strings.TrimSpace(out) != "ACTIVE" {
			return fmt.Errorf("server show: %s %s", out, errOut)
		}
		return nil
	})
	var flat map[string]any
	if err := json.Unmarshal([]byte(mustOS(t, bin, env, "server", "show", "--diagnostics", server.ID, "-f", "json")), &flat); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"cpu0_time", "memory", "vda_read"} {
		if _, ok := flat[k]; !ok {
			t.Fatalf("server show --diagnostics: no %s in %v", k, flat)
		}
	}
	out := mustOS(t, nova, append(env, "OS_COMPUTE_API_VERSION=2.48"), "diagnostics", server.ID)
	for _, want := range []string{"cpu_details", "memory_details", "| driver ", "libvirt"} {
		if !strings.Contains(out, want) {
			t.Fatalf("nova diagnostics lacks %q:\n%s", want, out)
		}
	}
}
