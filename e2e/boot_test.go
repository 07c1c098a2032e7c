package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

type instanceJSON struct {
	ID, Name, Status, HostID, TaskState string
	Fault                               *struct{ Message string }
}

type hostJSON struct {
	ID, Name, Status string
}

func listInstances(t *testing.T, addr string) []instanceJSON {
	t.Helper()
	out, errOut, code := cli(t, addr, "instance", "list", "-json")
	if code != 0 {
		t.Fatalf("instance list: %s", errOut)
	}
	var insts []instanceJSON
	if err := json.Unmarshal([]byte(out), &insts); err != nil {
		t.Fatalf("instance list -json: %v\n%s", err, out)
	}
	return insts
}

// TestBootListDeleteAcrossClusterAndClients runs 3 servers and 2 client
// agents as real processes, boots instances with cloudctl, checks they
// run on the clients' hosts, deletes them, and checks a killed client's
// host goes down.
func TestBootListDeleteAcrossClusterAndClients(t *testing.T) {
	t.Parallel()
	s1 := startAgent(t, "s1", "--server", "--bootstrap-expect", "3")
	s2 := startAgent(t, "s2", "--server", "--bootstrap-expect", "3", "--join", s1.gossip)
	s3 := startAgent(t, "s3", "--server", "--bootstrap-expect", "3", "--join", s1.gossip)
	c1 := startAgent(t, "c1", "--client", "--join", s2.gossip)
	c2 := startAgent(t, "c2", "--client", "--join", s3.gossip)
	_ = c2

	eventually(t, "two hosts up", 30*time.Second, func() error {
		out, errOut, code := cli(t, s1.http, "host", "list", "-json")
		if code != 0 {
			return fmt.Errorf("host list: %s", errOut)
		}
		var hosts []hostJSON
		if err := json.Unmarshal([]byte(out), &hosts); err != nil {
			return err
		}
		up := 0
		for _, h := range hosts {
			if h.Status == "up" {
				up++
			}
		}
		if up != 2 {
			return fmt.Errorf("%d hosts up", up)
		}
		return nil
	})
	if _, errOut, code := cli(t, s1.http, "flavor", "create", "-id", "1", "-vcpus", "1", "-ram", "512", "-disk", "1", "m1.tiny"); code != 0 {
		t.Fatalf("flavor: %s", errOut)
	}

	// Boot through a client agent's API: it forwards to the servers.
	out, errOut, code := cli(t, c1.http, "instance", "create", "-flavor", "m1.tiny", "-image", "cirros", "-count", "4", "-wait", "web")
	if code != 0 {
		t.Fatalf("instance create: %s\n%s", errOut, out)
	}
	insts := listInstances(t, s2.http)
	if len(insts) != 4 {
		t.Fatalf("%d instances listed", len(insts))
	}
	hostsUsed := map[string]bool{}
	for _, i := range insts {
		if i.Status != "ACTIVE" {
			t.Fatalf("instance %s is %s", i.Name, i.Status)
		}
		hostsUsed[i.HostID] = true
	}
	if len(hostsUsed) != 2 {
		t.Fatalf("4 instances on %d hosts; the RAM weigher should spread them", len(hostsUsed))
	}
	out, _, _ = cli(t, s3.http, "instance", "status", insts[0].ID)
	if !strings.Contains(out, "ACTIVE") {
		t.Fatalf("status: %s", out)
	}

	// Delete them all; the agents destroy them and the records go.
	args := []string{"instance", "delete"}
	for _, i := range insts {
		args = append(args, i.ID)
	}
	if _, errOut, code := cli(t, s1.http, args...); code != 0 {
		t.Fatalf("delete: %s", errOut)
	}
	eventually(t, "instances deleted", 30*time.Second, func() error {
		if n := len(listInstances(t, s1.http)); n != 0 {
			return fmt.Errorf("%d instances left", n)
		}
		return nil
	})

	// Kill a client: gossip marks its host down within seconds.
	c1.kill()
	eventually(t, "killed client's host down", 30*time.Second, func() error {
		out, _, _ := cli(t, s1.http, "host", "status", "c1")
		if !strings.Contains(out, "down") {
			return fmt.Errorf("host c1:\n%s", out)
		}
		return nil
	})
}

// TestDevModeBootsOnSimulatedHosts checks that --dev runs a server and a
// fake-driver client, with --dev-hosts adding simulated hosts.
func TestDevModeBootsOnSimulatedHosts(t *testing.T) {
	t.Parallel()
	dev := startAgent(t, "devbox", "--dev", "--dev-hosts", "3")
	eventually(t, "4 hosts", 20*time.Second, func() error {
		out, _, code := cli(t, dev.http, "host", "list")
		if code != 0 || strings.Count(out, " up ") < 4 {
			return fmt.Errorf("hosts:\n%s", out)
		}
		return nil
	})
	eventually(t, "seeded flavors", 20*time.Second, func() error {
		if out, _, _ := cli(t, dev.http, "flavor", "list"); !strings.Contains(out, "m1.xlarge") {
			return fmt.Errorf("no flavors yet")
		}
		return nil
	})
	out, errOut, code := cli(t, dev.http, "instance", "create", "-flavor", "m1.xlarge", "-image", "cirros", "-count", "5", "-wait", "big")
	// Four hosts of 32 GiB take one 16 GiB instance each... and a second
	// does not fit after the 512 MB reservation: one must fail, with the
	// reason.
	if code != 1 || !strings.Contains(out+errOut, "No valid host was found") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	insts := listInstances(t, dev.http)
	active, failed := 0, 0
	for _, i := range insts {
		switch i.Status {
		case "ACTIVE":
			active++
		case "ERROR":
			failed++
			if i.Fault == nil || !strings.Contains(i.Fault.Message, "insufficient MEMORY_MB") {
				t.Fatalf("fault %+v", i.Fault)
			}
		}
	}
	if active != 4 || failed != 1 {
		t.Fatalf("%d active, %d failed", active, failed)
	}
}
