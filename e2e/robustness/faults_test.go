package robustness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// requireOrSkip skips a fault whose tool is missing, but fails under
// CI=true when the machine could run it (root).
func requireOrSkip(t *testing.T, what string, err error) bool {
	t.Helper()
	if err == nil {
		return true
	}
	if os.Getenv("CI") == "true" && os.Geteuid() == 0 {
		t.Fatalf("%s: %v (CI=true and root: install it with scripts/ci-deps.sh)", what, err)
	}
	t.Logf("SKIPPING fault %q: %v", what, err)
	return false
}

// partitioner black-holes all packets to and from one loopback address
// with an nftables table of its own, removed at cleanup.
type partitioner struct {
	table string
}

func newPartitioner(t *testing.T) (*partitioner, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("network partitions need root (nftables)")
	}
	nft, err := exec.LookPath("nft")
	if err != nil {
		return nil, fmt.Errorf("nft not installed: %w", err)
	}
	p := &partitioner{table: fmt.Sprintf("stratus_robust_%d", os.Getpid())}
	script := fmt.Sprintf("add table ip %s\nadd chain ip %s out { type filter hook output priority 0; policy accept; }\n",
		p.table, p.table)
	if out, err := runNft(nft, script); err != nil {
		return nil, fmt.Errorf("create nft table: %v: %s", err, out)
	}
	t.Cleanup(func() { _, _ = runNft(nft, "delete table ip "+p.table+"\n") })
	return p, nil
}

func runNft(nft, script string) ([]byte, error) {
	cmd := exec.Command(nft, "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	return cmd.CombinedOutput()
}

// isolate drops every packet from or to ip (on loopback a packet passes
// the output hook once, so one chain covers both directions).
func (p *partitioner) isolate(ip string) error {
	script := fmt.Sprintf("add rule ip %[1]s out ip saddr %[2]s drop\nadd rule ip %[1]s out ip daddr %[2]s drop\n", p.table, ip)
	if out, err := runNft("nft", script); err != nil {
		return fmt.Errorf("isolate %s: %v: %s", ip, err, out)
	}
	return nil
}

// heal removes every drop rule.
func (p *partitioner) heal() error {
	if out, err := runNft("nft", "flush chain ip "+p.table+" out\n"); err != nil {
		return fmt.Errorf("heal: %v: %s", err, out)
	}
	return nil
}

// smallDisk is a tmpfs mounted over a server's data dir so the test can
// fill it.
type smallDisk struct {
	dir string
}

func mountSmallDisk(t *testing.T) (*smallDisk, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("a full disk needs root to mount a small tmpfs")
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64m,mode=0700"); err != nil {
		return nil, fmt.Errorf("mount tmpfs: %w", err)
	}
	// Registered after TempDir's cleanup, so it runs first.
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return &smallDisk{dir: dir}, nil
}

func (d *smallDisk) fillPath() string { return filepath.Join(d.dir, "filler") }

// fill writes until the filesystem has no space left.
func (d *smallDisk) fill() error {
	f, err := os.Create(d.fillPath())
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}

func (d *smallDisk) free() error { return os.Remove(d.fillPath()) }
