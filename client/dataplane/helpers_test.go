package dataplane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// requireNetTools skips the test without root or the commands it needs
// (ip, nft, dnsmasq, busybox, nc, ping); under CI=true it fails instead.
func requireNetTools(t *testing.T) {
	t.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	missing = append(missing, Missing()...)
	for _, tool := range []string{"busybox", "nc", "ping"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("the dataplane tests need %s (scripts/netplane-setup.sh installs the tools)", strings.Join(missing, ", "))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// randHex is n random hex characters.
func randHex(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// newNetns creates a network namespace with a unique name, deleted (and
// every process left in it killed) when the test ends.
func newNetns(t *testing.T, tag string) string {
	t.Helper()
	name := "stp" + tag + randHex(8)
	sh(t, "", "ip", "netns", "add", name)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "pids", name).Output(); err == nil {
			for _, pid := range strings.Fields(string(out)) {
				_ = exec.Command("kill", "-9", pid).Run()
			}
		}
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("delete netns %s: %v: %s", name, err, out)
		}
	})
	sh(t, name, "ip", "link", "set", "lo", "up")
	return name
}

// sh runs a command (in a netns when ns is set) and fails the test on
// error; it returns the standard output.
func sh(t *testing.T, ns string, name string, args ...string) string {
	t.Helper()
	out, err := tryIn(ns, 60*time.Second, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tryIn runs a command in a netns with a timeout.
func tryIn(ns string, timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return runner{netns: ns}.run(ctx, name, args...)
}

// waitFor polls cond until it returns nil, failing after 90 s.
func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// guest is a netns standing in for a VM: its eth0 is one end of a veth
// whose other end is the port's tap in the host netns.
type guest struct {
	ns  string
	dir string
}

// newGuest makes a guest for a port: eth0 with the port's MAC, the tap
// left unplugged (the plane plugs taps into their bridges).
func newGuest(t *testing.T, hostNS, portID, mac string) *guest {
	t.Helper()
	g := &guest{ns: newNetns(t, "g"), dir: t.TempDir()}
	sh(t, hostNS, "ip", "link", "add", TapName(portID), "type", "veth", "peer", "name", "eth0", "netns", g.ns)
	sh(t, g.ns, "ip", "link", "set", "eth0", "address", mac, "up")
	script := filepath.Join(g.dir, "udhcpc.sh")
	body := "#!/bin/sh\ncase \"$1\" in bound|renew)\n  ip addr flush dev \"$interface\"\n" +
		"  ip addr add \"$ip/$mask\" dev \"$interface\"\n  [ -n \"$router\" ] && ip route replace default via \"${router%% *}\"\n" +
		"  echo \"$ip\" > " + filepath.Join(g.dir, "lease") + "\n  echo \"$mtu\" > " + filepath.Join(g.dir, "mtu") + "\n;;\nesac\nexit 0\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return g
}

// dhcp runs busybox udhcpc once in the guest and returns the address
// it was given.
func (g *guest) dhcp() (string, error) {
	_, err := tryIn(g.ns, 60*time.Second, "busybox", "udhcpc", "-i", "eth0", "-f", "-q", "-n", "-t", "20", "-T", "2",
		"-s", filepath.Join(g.dir, "udhcpc.sh"))
	if err != nil {
		return "", err
	}
	raw, err := os.ReadFile(filepath.Join(g.dir, "lease"))
	return strings.TrimSpace(string(raw)), err
}

// mtu is the interface MTU (DHCP option 26) the guest's last DHCP
// answer carried, "" for none. udhcpc does not ask for it.
func (g *guest) mtu() string {
	raw, _ := os.ReadFile(filepath.Join(g.dir, "mtu"))
	return strings.TrimSpace(string(raw))
}

// listen starts nc listening on a TCP port in the guest until the test
// ends.
func (g *guest) listen(t *testing.T, port int) {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", g.ns, "nc", "-lk", fmt.Sprint(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitFor(t, "nc listening", func() error {
		_, err := tryIn(g.ns, 10*time.Second, "nc", "-z", "-w", "2", "127.0.0.1", fmt.Sprint(port))
		return err
	})
}

// connects reports whether a TCP connection from the guest to addr:port
// is accepted (nc -z, 3 s timeout).
func (g *guest) connects(addr string, port int) bool {
	_, err := tryIn(g.ns, 30*time.Second, "nc", "-z", "-w", "3", addr, fmt.Sprint(port))
	return err == nil
}

// pings reports whether one ping from the guest to addr is answered.
func (g *guest) pings(addr string) bool {
	_, err := tryIn(g.ns, 30*time.Second, "ping", "-c", "1", "-W", "3", addr)
	return err == nil
}
