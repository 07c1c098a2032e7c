package command

import (
	"strings"
	"testing"
)

// TestInstanceLogsAndConsoleAgainstDevAgent reads a fake instance's
// console log and asks for its console URLs through a real agent.
func TestInstanceLogsAndConsoleAgainstDevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	readyDevAgent(t)
	runOK(t, "instance", "create", "-flavor", "m1.tiny", "-image", "cirros", "-wait", "con")

	out := runOK(t, "instance", "logs", "con")
	if !strings.Contains(out, "login:") {
		t.Fatalf("instance logs: %q", out)
	}
	out = runOK(t, "instance", "logs", "-tail", "1", "con")
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "login:") {
		t.Fatalf("instance logs -tail 1: %q", out)
	}
	out = runOK(t, "instance", "console", "con")
	if !strings.Contains(out, "/ui/console.html?path=console%2Fwebsockify%3Ftoken%3D") {
		t.Fatalf("instance console: %q", out)
	}
	out = runOK(t, "instance", "console", "-type", "xvpvnc", "-json", "con")
	if !strings.Contains(out, `"Protocol": "vnc"`) || !strings.Contains(out, "/console?token=") {
		t.Fatalf("instance console -type xvpvnc -json: %q", out)
	}
	// The fake driver has no serial console.
	_, stderr, code := run(t, "instance", "console", "-type", "serial", "con")
	if code != 1 || !strings.Contains(stderr, "serial") {
		t.Fatalf("serial console on the fake driver: code %d, %q", code, stderr)
	}
	_, stderr, code = run(t, "instance", "console", "-type", "rdp", "con")
	if code != 2 || !strings.Contains(stderr, "-type must be") {
		t.Fatalf("bad type: code %d, %q", code, stderr)
	}
}

func TestNewOutputFollowsTheLogWindow(t *testing.T) {
	for _, tc := range []struct{ prev, next, want string }{
		{"", "a\nb\n", "a\nb\n"},
		{"a\nb\n", "a\nb\nc\n", "c\n"},
		// The window moved: the old start fell off.
		{"a\nb\nc\n", "b\nc\nd\ne\n", "d\ne\n"},
		// The log was reset: everything is new.
		{"x\ny\n", "fresh\n", "fresh\n"},
	} {
		if got := newOutput(tc.prev, tc.next); got != tc.want {
			t.Errorf("newOutput(%q, %q) = %q, want %q", tc.prev, tc.next, got, tc.want)
		}
	}
}
