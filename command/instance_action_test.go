package command

import (
	"strings"
	"testing"
)

// TestInstanceActionRunsTheOperation: "instance action OP" sends what
// "instance OP" sends, and refuses unknown operations.
func TestInstanceActionRunsTheOperation(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	for _, tc := range []struct {
		args []string
		body string
	}{
		{[]string{"reboot", "-hard"}, `{"Action":"reboot","Hard":true}`},
		{[]string{"pause"}, `{"Action":"pause"}`},
		{[]string{"live-migrate", "-host", "cmp-2"}, `{"Action":"live-migration","Host":"cmp-2"}`},
	} {
		args := append([]string{"instance", "action"}, tc.args...)
		out := runOK(t, append(args, "-detach", "-address", srv.URL, "db")...)
		if r := srv.LastRequest(); r.Path != "/v1/instances/"+idDB+"/actions" || string(r.Body) != tc.body {
			t.Errorf("%v: sent %s %s", tc.args, r.Path, r.Body)
		}
		if !strings.HasPrefix(out, "Requested ") {
			t.Errorf("%v: %q", tc.args, out)
		}
	}
	_, stderr, code := run(t, "instance", "action", "explode", "db")
	if code != 2 || !strings.Contains(stderr, `unknown operation "explode"`) {
		t.Errorf("unknown op: %d %q", code, stderr)
	}
	_, stderr, code = run(t, "instance", "action", "list")
	if code != 2 || !strings.Contains(stderr, `unknown operation "list"`) {
		t.Errorf("a non-operation command: %d %q", code, stderr)
	}
	if _, _, code = run(t, "instance", "action"); code != 2 {
		t.Errorf("no op: exit %d", code)
	}
	out := runOK(t, "instance", "action", "-h")
	assertContains(t, "help", out, "Usage: cloudctl instance action OP [options] ID", "confirm-resize", "snapshot", "unshelve")
	_, stderr, code = run(t, "instance", "action", "pause", "-h")
	if code != 0 && !strings.Contains(stderr, "Usage: cloudctl instance pause") {
		t.Errorf("op help: %d %q", code, stderr)
	}
}
