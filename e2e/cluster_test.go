package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

type raftPeers struct {
	Servers []struct {
		ID, Node, Address string
		Leader, Voter     bool
	}
}

func TestThreeServerClusterSurvivesLeaderKill(t *testing.T) {
	t.Parallel()
	s1 := startAgent(t, "s1", "--server", "--bootstrap-expect", "3")
	s2 := startAgent(t, "s2", "--server", "--bootstrap-expect", "3", "--join", s1.gossip)
	s3 := startAgent(t, "s3", "--server", "--bootstrap-expect", "3", "-join", s1.gossip)
	procs := []*agentProc{s1, s2, s3}

	var leader *agentProc
	eventually(t, "a leader among 3 voters", 30*time.Second, func() error {
		out, errOut, code := cli(t, s2.http, "operator", "raft", "list-peers", "-json")
		if code != 0 {
			return fmt.Errorf("list-peers: %s", errOut)
		}
		var peers raftPeers
		if err := json.Unmarshal([]byte(out), &peers); err != nil {
			return err
		}
		if len(peers.Servers) != 3 {
			return fmt.Errorf("%d peers", len(peers.Servers))
		}
		for _, s := range peers.Servers {
			if s.Leader {
				for _, p := range procs {
					if p.rpc == s.Address {
						leader = p
					}
				}
			}
		}
		if leader == nil {
			return fmt.Errorf("no leader yet")
		}
		return nil
	})

	// Acknowledged writes through every server.
	var acked []string
	for i, p := range procs {
		id := fmt.Sprintf("%d", 10+i)
		if _, errOut, code := cli(t, p.http, "flavor", "create", "--id", id, "-vcpus", "1", "-ram", "64", "-disk", "1", "f"+id); code != 0 {
			t.Fatalf("create via %s: %s", p.name, errOut)
		}
		acked = append(acked, id)
	}

	leader.kill()
	var alive *agentProc
	for _, p := range procs {
		if p != leader {
			alive = p
			break
		}
	}
	// The survivors elect a new leader and accept writes again.
	eventually(t, "writes after the leader was killed", 30*time.Second, func() error {
		_, errOut, code := cli(t, alive.http, "flavor", "create", "--id", "99", "-vcpus", "1", "-ram", "64", "-disk", "1", "after")
		if code != 0 && !strings.Contains(errOut, "already exists") {
			return fmt.Errorf("create: %s", errOut)
		}
		return nil
	})
	acked = append(acked, "99")
	for _, p := range procs {
		if p == leader {
			continue
		}
		out, errOut, code := cli(t, p.http, "flavor", "list", "-json")
		if code != 0 {
			t.Fatalf("list via %s: %s", p.name, errOut)
		}
		var flavors []struct{ ID string }
		if err := json.Unmarshal([]byte(out), &flavors); err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, f := range flavors {
			have[f.ID] = true
		}
		for _, id := range acked {
			if !have[id] {
				t.Fatalf("%s lost acknowledged flavor %s", p.name, id)
			}
		}
	}
	out, _, code := cli(t, alive.http, "server", "members")
	if code != 0 || !strings.Contains(out, leader.name) {
		t.Fatalf("members: %s", out)
	}
}

func TestDevAgentWithCLI(t *testing.T) {
	t.Parallel()
	dev := startAgent(t, "dev", "--dev")
	eventually(t, "seeded flavors", 20*time.Second, func() error {
		out, errOut, code := cli(t, dev.http, "flavor", "list")
		if code != 0 || !strings.Contains(out, "m1.xlarge") {
			return fmt.Errorf("%s %s", out, errOut)
		}
		return nil
	})
	out, _, code := cli(t, "", "flavor", "show", "--address", dev.http, "m1.medium")
	if code != 0 || !strings.Contains(out, "4096") {
		t.Fatalf("show: %d %s", code, out)
	}
	if _, errOut, code := cli(t, dev.http, "flavor", "create", "-vcpus", "x", "n"); code != 2 || errOut == "" {
		t.Fatalf("bad flag: exit %d, %q", code, errOut)
	}
	if _, errOut, code := cli(t, dev.http, "flavor", "show", "nope"); code != 1 || !strings.Contains(errOut, "not found") {
		t.Fatalf("missing flavor: exit %d, %q", code, errOut)
	}
	snap := t.TempDir() + "/state.snap"
	if _, errOut, code := cli(t, dev.http, "operator", "snapshot", "save", snap); code != 0 {
		t.Fatalf("snapshot save: %s", errOut)
	}
	cli(t, dev.http, "flavor", "delete", "1")
	if _, errOut, code := cli(t, dev.http, "operator", "snapshot", "restore", snap); code != 0 {
		t.Fatalf("snapshot restore: %s", errOut)
	}
	if out, _, _ := cli(t, dev.http, "flavor", "show", "1"); !strings.Contains(out, "m1.tiny") {
		t.Fatalf("restore did not bring flavor 1 back: %s", out)
	}
}
