package e2e

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchSmall reports whether STRATUS_BENCH_SMALL asks for the small
// sizes make bench-smoke uses.
func benchSmall() bool { return os.Getenv("STRATUS_BENCH_SMALL") != "" }

// rssKiB reads VmRSS of a running process from /proc.
func rssKiB(b *testing.B, p *agentProc) int64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		b.Fatalf("read status of %s: %v", p.name, err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("VmRSS of %s: %q", p.name, line)
			}
			return kib
		}
	}
	b.Fatalf("no VmRSS in /proc/%d/status", p.cmd.Process.Pid)
	return 0
}

// waitHostsUp waits until addr lists at least n hosts up.
func waitHostsUp(b *testing.B, addr string, n int) {
	b.Helper()
	eventually(b, fmt.Sprintf("%d hosts up", n), 60*time.Second, func() error {
		out, _, code := cli(b, addr, "host", "list")
		if code != 0 || strings.Count(out, " up ") < n {
			return fmt.Errorf("hosts:\n%s", out)
		}
		return nil
	})
}

// bootTiny boots count instances of flavor and waits for them.
func bootTiny(b *testing.B, addr, flavor, name string, count int) {
	b.Helper()
	eventually(b, "flavor "+flavor, 60*time.Second, func() error {
		if out, _, _ := cli(b, addr, "flavor", "list"); !strings.Contains(out, flavor) {
			return fmt.Errorf("no flavor %s yet", flavor)
		}
		return nil
	})
	out, errOut, code := cli(b, addr, "instance", "create", "-flavor", flavor, "-image", "cirros",
		"-count", strconv.Itoa(count), "-wait", name)
	if code != 0 {
		b.Fatalf("boot %d: exit %d\n%s\n%s", count, code, out, errOut)
	}
}

// BenchmarkFootprint measures the resident memory of real cloudctl
// processes: a dev cloud (server and fake-driver client in one process,
// 3 hosts) idle and with 30 ACTIVE instances; and a client agent
// (fake driver) before and after booting 100 instances on it, reported
// per 100. It also times a new client agent from process start to its
// host up (schedulable).
func BenchmarkFootprint(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.Run("dev", benchDevRSS)
		b.Run("agent", benchAgentRSS)
	}
}

func benchDevRSS(b *testing.B) {
	count := 30
	if benchSmall() {
		count = 3
	}
	dev := startAgent(b, "fpdev", "--dev", "--dev-hosts", "2", "--log-level", "warn")
	waitHostsUp(b, dev.http, 3)
	idle := rssKiB(b, dev)
	bootTiny(b, dev.http, "m1.tiny", "fp", count)
	busy := rssKiB(b, dev)
	b.ReportMetric(float64(idle)/1024, "idle-RSS-MiB")
	b.ReportMetric(float64(busy)/1024, "RSS-MiB")
	b.Logf("dev cloud, 3 hosts: VmRSS %d MiB idle, %d MiB with %d instances", idle>>10, busy>>10, count)
}

func benchAgentRSS(b *testing.B) {
	count := 100
	if benchSmall() {
		count = 10
	}
	srv := startAgent(b, "fpsrv", "--server", "--bootstrap-expect", "1", "--log-level", "warn")
	start := time.Now()
	hv := startAgent(b, "fphv", "--client", "--dev-hosts", "1", "--join", srv.gossip, "--log-level", "warn")
	waitHostsUp(b, srv.http, 2)
	joined := time.Since(start)
	before := rssKiB(b, hv)
	// Only dev mode seeds flavors.
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Post(srv.http+"/v1/flavors", "application/json",
		strings.NewReader(`{"ID":"fp1","Name":"fp.tiny","VCPUs":1,"MemoryMB":256,"RootGB":1}`))
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("create flavor: status %d", resp.StatusCode)
	}
	bootTiny(b, srv.http, "fp.tiny", "fpa", count)
	after := rssKiB(b, hv)
	per100 := float64(after-before) / 1024 * 100 / float64(count)
	b.ReportMetric(float64(before)/1024, "agent-idle-RSS-MiB")
	b.ReportMetric(per100, "agent-MiB/100inst")
	b.ReportMetric(joined.Seconds(), "new-agent-schedulable-s")
	b.Logf("client agent (fake driver, 2 hosts): VmRSS %d MiB idle, %d MiB with %d instances (%.1f MiB per 100); process start → hosts up %v",
		before>>10, after>>10, count, per100, joined)
}
