package command

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent"
	"github.com/stratus-cloud/stratus/api"
)

// devAgent starts a dev agent (a server and a fake-driver host) on random
// loopback ports and returns its HTTP address.
func devAgent(t *testing.T) string {
	t.Helper()
	zero := 0
	cfg := &agent.Config{DevMode: true, NodeName: "cmd-test", DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Ports: &agent.PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero}}
	if err := cfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(cfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Error}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	return "http://" + a.HTTPAddr()
}

// readyDevAgent starts a dev agent, points the commands at it and waits
// until its host is up and its seeds (flavor m1.tiny, image cirros) are
// there; it returns a client of it.
func readyDevAgent(t *testing.T) *api.Client {
	t.Helper()
	t.Setenv(api.EnvAddress, devAgent(t))
	t.Setenv(api.EnvToken, "")
	c, err := api.NewClient(nil)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		hosts, _, err := c.Hosts().List(nil)
		_, _, ferr := c.Flavors().Info("m1.tiny", nil)
		_, _, ierr := c.Images().Info("cirros", nil)
		if err == nil && ferr == nil && ierr == nil && len(hosts) == 1 && hosts[0].Status == api.HostStatusUp {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("no host up, flavor or image: %v %v %v %v", hosts, err, ferr, ierr)
		}
	}
}

// TestInstanceOpsAgainstDevAgent runs operations against a real agent:
// the monitor must see the servers' tasks end.
func TestInstanceOpsAgainstDevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	readyDevAgent(t)
	runOK(t, "instance", "create", "-flavor", "m1.tiny", "-image", "cirros", "-wait", "web")

	out := runOK(t, "instance", "pause", "web")
	assertContains(t, "pause", untimed(out), "Event compute_pause_instance: Success\n", "finished: the instance is PAUSED\n")
	out = runOK(t, "instance", "unpause", "web")
	assertContains(t, "unpause", untimed(out), "finished: the instance is ACTIVE\n")
	out = runOK(t, "instance", "reboot", "-hard", "web")
	assertContains(t, "hard reboot", untimed(out), "Status HARD_REBOOT", "finished: the instance is ACTIVE\n")

	// A refused operation says why.
	_, errOut, code := run(t, "instance", "unpause", "web")
	if code != 1 || !strings.Contains(errOut, "409 (conflict: ") || !strings.Contains(errOut, "vm_state active") {
		t.Errorf("unpause of an active instance: exit %d, stderr %q", code, errOut)
	}
	out = runOK(t, "instance", "actions", "web")
	for _, action := range []string{"reboot", "unpause", "pause", "create"} {
		if !strings.Contains(out, fmt.Sprintf("  %s ", action)) {
			t.Errorf("actions do not list %s:\n%s", action, out)
		}
	}
	if strings.Contains(out, "Running") || strings.Contains(out, "Error") {
		t.Errorf("an action did not succeed:\n%s", out)
	}
	if out := runOK(t, "instance", "migrations", "web"); out != "No migrations found\n" {
		t.Errorf("migrations: %q", out)
	}
}
