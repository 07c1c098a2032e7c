package server

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// netCutter cuts real agents off the network, as a host whose link or
// power is gone: every packet its process sends, and every packet sent
// to its gossip port, is dropped by an nftables table of this benchmark's
// own (removed at cleanup). The process keeps running and sending into
// the void. A process's packets are told apart by its user id, which is
// why each cut victim runs under a user of its own (unused on the
// machine: 40000 + this process's id modulo 20000, + the victim's index);
// on loopback every packet passes the sender's output hook, so one
// output chain covers both directions.
type netCutter struct {
	nft   string
	table string
	base  int
}

// newNetCutter creates the table, or fails the benchmark: it needs root
// and nft.
func newNetCutter(b *testing.B) *netCutter {
	b.Helper()
	if os.Geteuid() != 0 {
		b.Fatal("STRATUS_BENCH_CUT needs root (nftables and a user id per victim)")
	}
	nft, err := exec.LookPath("nft")
	if err != nil {
		b.Fatalf("STRATUS_BENCH_CUT needs nft: %v", err)
	}
	c := &netCutter{nft: nft, table: fmt.Sprintf("stratus_bench_%d", os.Getpid()), base: 40000 + os.Getpid()%20000}
	if err := c.run(fmt.Sprintf("add table inet %[1]s\nadd chain inet %[1]s out { type filter hook output priority 0; policy accept; }\n", c.table)); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.run("delete table inet " + c.table + "\n") })
	return c
}

func (c *netCutter) run(script string) error {
	cmd := exec.Command(c.nft, "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft: %v: %s", err, out)
	}
	return nil
}

// user is the user id victim i runs as and a data directory it owns
// (outside b.TempDir, which only root may enter), removed at cleanup.
func (c *netCutter) user(b *testing.B, i int) (int, string) {
	b.Helper()
	uid := c.base + i
	dir, err := os.MkdirTemp("", "stratus-bench-agent-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chown(dir, uid, uid); err != nil {
		b.Fatal(err)
	}
	return uid, dir
}

// cut drops every packet a's process sends and every packet sent to its
// gossip port (UDP probes and gossip, TCP state exchanges and the
// leader's check that its port still accepts).
func (c *netCutter) cut(a *realAgent) error {
	if a.uid == 0 || a.gossipPort == "" {
		return fmt.Errorf("agent %s runs as this process's user or has no gossip port: it cannot be cut alone", a.name)
	}
	return c.run(fmt.Sprintf("add rule inet %[1]s out meta skuid %[2]d drop\n"+
		"add rule inet %[1]s out udp dport %[3]s drop\nadd rule inet %[1]s out tcp dport %[3]s drop\n",
		c.table, a.uid, a.gossipPort))
}
