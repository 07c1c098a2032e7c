package command

import (
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

// TestNetworkCommandsAgainstDevAgent creates, shows, lists and deletes
// networks, subnets and ports on a real agent.
func TestNetworkCommandsAgainstDevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	t.Setenv(api.EnvAddress, devAgent(t))
	t.Setenv(api.EnvToken, "")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if out, _, code := run(t, "network", "list"); code == 0 && strings.Contains(out, "private") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("dev networks not seeded")
		}
	}
	assertContains(t, "network show", runOK(t, "network", "show", "private"), "Shared           = true", "10.0.0.0/24", "10.0.0.1")
	assertContains(t, "network create", runOK(t, "network", "create", "-subnet", "192.168.9.0/24", "n9"), `Network "n9" created`)
	assertContains(t, "subnet list", runOK(t, "subnet", "list", "-network", "n9"), "n9-subnet", "192.168.9.0/24", "192.168.9.1")
	assertContains(t, "port create", runOK(t, "port", "create", "-network", "n9", "-ip", "192.168.9.20", "p1"), "addresses 192.168.9.20")
	assertContains(t, "port create", runOK(t, "port", "create", "-network", "n9", "p2"), "addresses 192.168.9.2)")
	assertContains(t, "port list", runOK(t, "port", "list", "-network", "n9"), "p1", "p2", "DOWN")
	if _, errOut, code := run(t, "port", "create", "-network", "n9", "-ip", "192.168.9.20", "p3"); code != 1 || !strings.Contains(errOut, "already allocated") {
		t.Fatalf("duplicate address: exit %d %s", code, errOut)
	}
	if _, errOut, code := run(t, "network", "delete", "n9"); code != 1 || !strings.Contains(errOut, "ports still in use") {
		t.Fatalf("delete network with ports: exit %d %s", code, errOut)
	}
	runOK(t, "port", "delete", "p1", "p2")
	assertContains(t, "network delete", runOK(t, "network", "delete", "n9"), `Network "n9" deleted`)
	if out := runOK(t, "network", "list"); strings.Contains(out, "n9") {
		t.Fatalf("network list after delete: %s", out)
	}
}
