package command

import (
	"strings"
	"testing"
)

// TestInstanceDiagnosticsAgainstDevAgent reads a fake instance's
// diagnostics through a real agent's native API, as text and JSON.
func TestInstanceDiagnosticsAgainstDevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	readyDevAgent(t)
	runOK(t, "instance", "create", "-flavor", "m1.tiny", "-image", "cirros", "-wait", "dg")

	out := runOK(t, "instance", "diagnostics", "dg")
	for _, want := range []string{"State       = running", "Driver      = fake", "vda"} {
		if !strings.Contains(out, want) {
			t.Fatalf("instance diagnostics lacks %q:\n%s", want, out)
		}
	}
	out = runOK(t, "instance", "diagnostics", "-json", "dg")
	if !strings.Contains(out, `"cpu0_time"`) || !strings.Contains(out, `"MaximumMB"`) {
		t.Fatalf("instance diagnostics -json: %s", out)
	}
	_, stderr, code := run(t, "instance", "diagnostics", "nope")
	if code != 1 || !strings.Contains(stderr, "nope") {
		t.Fatalf("diagnostics of an unknown instance: code %d, %q", code, stderr)
	}
}
