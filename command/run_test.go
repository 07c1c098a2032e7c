package command

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/api"
	"github.com/stratus-cloud/stratus/api/apitest"
)

// run runs cloudctl with args and returns its outputs and exit code.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// runOK runs cloudctl and fails the test unless it exits 0.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, args...)
	if code != 0 {
		t.Fatalf("cloudctl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// newServer starts a fake agent and points the environment at nothing
// reachable, so only an explicit -address reaches it.
func newServer(t *testing.T) *apitest.Server {
	t.Setenv(api.EnvAddress, "http://127.0.0.1:1")
	t.Setenv(api.EnvToken, "")
	return apitest.NewServer(t)
}

func assertContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}

func TestTopLevelHelp(t *testing.T) {
	for _, args := range [][]string{nil, {"-h"}, {"--help"}, {"-help"}, {"help"}} {
		out, errOut, code := run(t, args...)
		if code != 0 || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
		assertContains(t, "top-level help", out, "Usage: cloudctl", "flavor", "operator", "server", "version")
		if strings.Contains(out, "list-peers") {
			t.Errorf("%v: top-level help lists nested commands:\n%s", args, out)
		}
	}
}

func TestGroupAndCommandHelp(t *testing.T) {
	for _, args := range [][]string{{"flavor"}, {"flavor", "-h"}, {"flavor", "--help"}, {"help", "flavor"}} {
		out := runOK(t, args...)
		assertContains(t, "flavor help", out, "create", "list", "show", "delete", "Manage flavors")
	}
	out := runOK(t, "operator", "raft")
	assertContains(t, "operator raft help", out, "list-peers", "remove-peer")

	for _, args := range [][]string{{"flavor", "create", "-h"}, {"flavor", "create", "--help"}, {"help", "flavor", "create"}} {
		out := runOK(t, args...)
		assertContains(t, "flavor create help", out, "Usage: cloudctl flavor create [options] NAME",
			"-vcpus <int>", "-property <KEY=VALUE>", "Client Options:", "-address", "-json", "-stale", "-token")
	}
	out = runOK(t, "version", "-h")
	assertContains(t, "version help", out, "Usage: cloudctl version\n")
	if strings.Contains(out, "-address") {
		t.Errorf("version help lists client options:\n%s", out)
	}
}

func TestUnknownCommandsAndFlags(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"frob"}, 1, `unknown command "frob"`},
		{[]string{"flavor", "frob"}, 1, `unknown command "flavor frob"`},
		{[]string{"operator", "raft", "frob", "x"}, 1, `unknown command "operator raft frob"`},
		{[]string{"help", "nope"}, 1, `unknown command "nope"`},
		{[]string{"-x"}, 2, "unknown flag -x"},
		{[]string{"flavor", "-json"}, 2, "needs a subcommand"},
		{[]string{"version", "extra"}, 2, "takes no arguments"},
		{[]string{"flavor", "list", "-nope"}, 2, "flag provided but not defined: -nope"},
	}
	for _, tc := range cases {
		out, errOut, code := run(t, tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, errOut)
		}
		assertContains(t, "stderr", errOut, tc.want)
		if tc.code == 1 && out != "" {
			t.Errorf("%v: stdout %q", tc.args, out)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		out := runOK(t, args...)
		if !strings.HasPrefix(out, "cloudctl v0.1.0\n") || !strings.Contains(out, "go1") {
			t.Errorf("%v: %q", args, out)
		}
	}
	defer func(v string) { Version = v }(Version)
	Version = "v9.9.9-dev"
	if out := runOK(t, "version"); !strings.HasPrefix(out, "cloudctl v9.9.9-dev\n") {
		t.Errorf("overridden version: %q", out)
	}
}

// testCommand is a Command registered by TestRegister, as agent.go does.
type testCommand struct{ ui *UI }

func (c *testCommand) Synopsis() string { return "A test command" }
func (c *testCommand) Help() string     { return "Usage: cloudctl " + c.ui.Name + "\n" }
func (c *testCommand) Run(args []string) int {
	c.ui.Stdout.Write([]byte(c.ui.Name + ":" + strings.Join(args, ",") + "\n"))
	return 3
}

func TestRegister(t *testing.T) {
	register("zz-test", func(ui *UI) Command { return &testCommand{ui} })
	defer delete(commands, "zz-test")

	out, _, code := run(t, "zz-test", "a", "-b")
	if code != 3 || out != "zz-test:a,-b\n" {
		t.Errorf("registered command: exit %d, stdout %q", code, out)
	}
	assertContains(t, "help", runOK(t), "zz-test", "A test command")
	assertContains(t, "help zz-test", runOK(t, "help", "zz-test"), "Usage: cloudctl zz-test")

	defer func() {
		if recover() == nil {
			t.Error("registering a duplicate name did not panic")
		}
	}()
	register("flavor list", func(ui *UI) Command { return &testCommand{ui} })
}

func TestClientErrors(t *testing.T) {
	newServer(t)
	_, errOut, code := run(t, "flavor", "list", "-address", "127.0.0.1:8774")
	if code != 1 {
		t.Errorf("bad address: exit %d", code)
	}
	assertContains(t, "stderr", errOut, "Error initializing client: invalid address")

	_, errOut, code = run(t, "flavor", "list") // $CLOUDCTL_ADDR points at a closed port
	if code != 1 {
		t.Errorf("unreachable agent: exit %d", code)
	}
	assertContains(t, "stderr", errOut, "Error listing flavors: ")
}

func TestAddressAndTokenFromEnvAndFlags(t *testing.T) {
	srv := newServer(t)
	srv.RequireToken("s3cret")
	t.Setenv(api.EnvAddress, srv.URL)
	t.Setenv(api.EnvToken, "s3cret")
	runOK(t, "flavor", "list")

	t.Setenv(api.EnvToken, "")
	_, errOut, code := run(t, "flavor", "list")
	if code != 1 {
		t.Errorf("without token: exit %d", code)
	}
	assertContains(t, "stderr", errOut, "Unexpected response code 403 (permission denied: ")

	t.Setenv(api.EnvAddress, "http://127.0.0.1:1")
	runOK(t, "flavor", "list", "--address", srv.URL, "--token", "s3cret")
	runOK(t, "flavor", "list", "-address="+srv.URL, "-token=s3cret")
}

func TestParseInterspersed(t *testing.T) {
	srv := newServer(t)
	runOK(t, "flavor", "create", "-address", srv.URL, "-id", "1", "-description", "--", "plain")
	if f := srv.Flavor("1"); f == nil || f.Name != "plain" || f.Description != "--" {
		t.Errorf("flavor 1 = %+v", f)
	}
	runOK(t, "flavor", "create", "-address", srv.URL, "-id", "2", "--", "-dashed")
	if f := srv.Flavor("2"); f == nil || f.Name != "-dashed" {
		t.Errorf("flavor 2 = %+v", f)
	}
}
