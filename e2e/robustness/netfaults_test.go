package robustness

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nftCgroupRoot is where nft looks up `socket cgroupv2` paths.
const nftCgroupRoot = "/sys/fs/cgroup"

// netFaults cuts and degrades the network between agents with an
// nftables table of its own, removed at cleanup.
//
// Every agent listens on its own loopback address, but the kernel gives
// the connections it dials the source 127.0.0.1, so a rule on addresses
// alone cannot tell which agent sent a packet (dropping a server's
// address only stops what is sent to it, never what it sends). Each
// agent therefore runs in a cgroup v2 of its own, and a rule names the
// sender by that cgroup and the receiver by its address. The HTTP ports
// are never cut: the test's clients keep reading from a partitioned
// agent, which is how a stale read would show.
type netFaults struct {
	table string
	// cgroupDir holds one cgroup per agent; nftDir is the same directory
	// as nft names it, at depth level of the cgroup v2 hierarchy.
	cgroupDir, nftDir string
	level             int
}

func newNetFaults(t *testing.T) (*netFaults, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("network faults need root (nftables, cgroups)")
	}
	if _, err := exec.LookPath("nft"); err != nil {
		return nil, fmt.Errorf("nft not installed: %w", err)
	}
	mount, err := cgroup2Mount()
	if err != nil {
		return nil, err
	}
	n := &netFaults{table: fmt.Sprintf("stratus_robust_%d", os.Getpid())}
	n.cgroupDir = filepath.Join(mount, fmt.Sprintf("stratus-robust-%d", os.Getpid()))
	rel, err := filepath.Rel(nftCgroupRoot, n.cgroupDir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("the cgroup v2 hierarchy is mounted at %s, outside %s where nft looks", mount, nftCgroupRoot)
	}
	n.nftDir, n.level = rel, 1
	if err := os.Mkdir(n.cgroupDir, 0o755); err != nil {
		return nil, fmt.Errorf("create a cgroup: %w", err)
	}
	// Registered before the cluster's cleanup, so it runs after the
	// processes are gone and their cgroups are empty.
	t.Cleanup(func() {
		entries, _ := os.ReadDir(n.cgroupDir)
		for _, e := range entries {
			if e.IsDir() {
				_ = os.Remove(filepath.Join(n.cgroupDir, e.Name()))
			}
		}
		_ = os.Remove(n.cgroupDir)
	})
	// The filter runs before the delay links' DNAT (priority -100), so
	// its rules see the address an agent dialled, not the link's.
	script := fmt.Sprintf("add table ip %[1]s\nadd chain ip %[1]s out { type filter hook output priority -150; policy accept; }\n", n.table)
	if out, err := runNft(script); err != nil {
		return nil, fmt.Errorf("create nft table: %v: %s", err, out)
	}
	t.Cleanup(func() { _, _ = runNft("delete table ip " + n.table + "\n") })
	return n, nil
}

// cgroup2Mount finds where the cgroup v2 hierarchy's root is mounted
// (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host).
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source opts
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(fields) || fields[sep+1] != "cgroup2" || len(fields) < 5 {
			continue
		}
		if fields[3] != "/" {
			continue // a namespaced view: nft's levels would not match
		}
		return fields[4], nil
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted at its root")
}

// cgroupFor creates the cgroup an agent runs in and returns its path.
func (n *netFaults) cgroupFor(name string) (string, error) {
	dir := filepath.Join(n.cgroupDir, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("create a cgroup: %w", err)
	}
	return dir, nil
}

func runNft(script string) ([]byte, error) {
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	return cmd.CombinedOutput()
}

// from matches what agent p sends, but its HTTP answers.
func (n *netFaults) from(p *proc) string {
	return fmt.Sprintf("socket cgroupv2 level %d %q tcp sport != %s", n.level+1, n.nftDir+"/"+p.name, p.ports[0])
}

// fromUDP matches the datagrams agent p sends (gossip).
func (n *netFaults) fromUDP(p *proc) string {
	return fmt.Sprintf("socket cgroupv2 level %d %q meta l4proto udp", n.level+1, n.nftDir+"/"+p.name)
}

func (n *netFaults) apply(rules ...string) error {
	var b strings.Builder
	for _, r := range rules {
		fmt.Fprintf(&b, "add rule ip %s out %s\n", n.table, r)
	}
	if out, err := runNft(b.String()); err != nil {
		return fmt.Errorf("nft: %v: %s", err, out)
	}
	return nil
}

// isolate cuts p from every other agent both ways.
func (n *netFaults) isolate(p *proc) error {
	return n.apply(n.from(p)+" drop", n.fromUDP(p)+" drop",
		fmt.Sprintf("ip daddr %s tcp dport != %s drop", p.bindIP, p.ports[0]),
		fmt.Sprintf("ip daddr %s meta l4proto udp drop", p.bindIP))
}

// mute drops what p sends but lets everything reach it: its own
// connections and gossip go unanswered, while it hears the others.
func (n *netFaults) mute(p *proc) error {
	return n.apply(n.from(p)+" drop", n.fromUDP(p)+" drop")
}

// deafen drops what is sent to p's listeners, while the connections p
// dials itself still work both ways: a leader so cut keeps replicating
// to its followers, but none can reach it.
func (n *netFaults) deafen(p *proc) error {
	return n.apply(fmt.Sprintf("ip daddr %s tcp dport != %s drop", p.bindIP, p.ports[0]),
		fmt.Sprintf("ip daddr %s meta l4proto udp drop", p.bindIP))
}

// cut severs a and b from each other only: each still reaches every
// other agent (a partial partition, the third server a bridge).
func (n *netFaults) cut(a, b *proc) error {
	return n.apply(
		fmt.Sprintf("%s ip daddr %s drop", n.from(a), b.bindIP), fmt.Sprintf("%s ip daddr %s drop", n.fromUDP(a), b.bindIP),
		fmt.Sprintf("%s ip daddr %s drop", n.from(b), a.bindIP), fmt.Sprintf("%s ip daddr %s drop", n.fromUDP(b), a.bindIP))
}

// lose drops percent of the packets every server sends to another agent.
func (n *netFaults) lose(servers []*proc, percent int) error {
	var rules []string
	for _, p := range servers {
		rules = append(rules, fmt.Sprintf("%s numgen random mod 100 < %d drop", n.from(p), percent),
			fmt.Sprintf("%s numgen random mod 100 < %d drop", n.fromUDP(p), percent))
	}
	return n.apply(rules...)
}

// heal removes every rule.
func (n *netFaults) heal() error {
	if out, err := runNft("flush chain ip " + n.table + " out\n"); err != nil {
		return fmt.Errorf("heal: %v: %s", err, out)
	}
	return nil
}
