package server

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// BenchmarkAgentDeath measures how long a host stays up in the
// replicated state after its agent *process* dies or freezes, among
// STRATUS_BENCH_MEMBERS gossip members (1,000; 20 under
// STRATUS_BENCH_SMALL). The victims are real `cloudctl agent --client`
// processes (fake driver, one host each, built from ./cmd/cloudctl or
// taken from STRATUS_CLOUDCTL), joined to the three servers of this
// process as any agent joins; the other members are BenchmarkHostDeath's
// simulated agents (a gossip member and an RPC session each, in child
// processes, with the large-pool settings from 500 members on). Each
// victim is measured once, one at a time, in one of two ways, or three
// with STRATUS_BENCH_CUT set (STRATUS_BENCH_KILLS victims of each, 5;
// 1 small):
//
//   - crash: SIGKILL. The kernel closes the agent's sockets: its RPC
//     session ends and its gossip port refuses (agent_exit.go).
//   - frozen: SIGSTOP. The process stays, holds its sockets and answers
//     nothing: the RPC session stays open and silent, gossip probes go
//     unanswered, but the kernel still completes TCP handshakes on its
//     gossip port, so the leader's check (gossip.Pool.ConfirmGone) takes
//     it for alive and the heartbeat TTL decides: the larger of 10 s and
//     2 s per MaxHeartbeatsPerSecond (50) hosts (scaledTTL: 14 s at 350
//     hosts, 40 s at 1,000), the agent heartbeating every half TTL.
//   - cut (STRATUS_BENCH_CUT, root and nft): every packet of the agent
//     dropped, as a host whose link or power is gone (netCutter): gossip
//     declares it failed and the leader's check of its port times out.
//
// From the signal to the victim's host down on every server, it reports
// p50 and max per way, and how many hosts each path (agent exit, gossip,
// heartbeat TTL) marked down during the measurements. A host seen down
// that no victim held counts as a false down.
func BenchmarkAgentDeath(b *testing.B) {
	members := benchSize("STRATUS_BENCH_MEMBERS", 1000, 20)
	perMode := benchSize("STRATUS_BENCH_KILLS", 5, 1)
	modes := []*agentDeathMode{
		{name: "crash", act: signal(syscall.SIGKILL)},
		{name: "frozen", act: signal(syscall.SIGSTOP)},
	}
	var cut *netCutter
	if os.Getenv("STRATUS_BENCH_CUT") != "" {
		cut = newNetCutter(b)
		modes = append(modes, &agentDeathMode{name: "cut", act: cut.cut, asUser: true})
	}
	bin := cloudctlBinary(b)
	largePoolDefaults(b, members)
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	servers := testCluster(b, 3, func(c *Config) {
		c.Logger = hclog.NewNullLogger()
		if os.Getenv("STRATUS_BENCH_LOG") != "" {
			c.Logger = hclog.New(&hclog.LoggerOptions{Name: c.NodeName, Level: hclog.Debug})
		}
		c.RaftTimeScale = 4 // as BenchmarkHostDeath: see there
	})
	stopProgress := benchProgress(servers)
	live := newHeartbeater(b, servers[0])
	procs := startSimProcs(b, simProcs(), servers[0].config.Region)
	victims := perMode * len(modes)
	startSimAgents(b, servers, procs, members-victims, live)
	real := startRealAgents(b, bin, servers, victims, func(i int) bool { return modes[i%len(modes)].asUser }, cut)
	waitAllHostsUp(b, servers, members)
	notAlive := settleGossip(b, servers, members+len(servers), 2*time.Minute)
	stopProgress()
	watch := watchFalseDowns(b, servers[0])
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if n > 0 {
			b.Fatal("BenchmarkAgentDeath measures each victim once: run it with -benchtime 1x")
		}
		for i, a := range real {
			modes[i%len(modes)].measure(b, servers, a, watch)
		}
	}
	b.StopTimer()
	falseDowns := watch.stop()
	b.ReportMetric(float64(members), "members")
	for _, m := range modes {
		m.report(b)
	}
	b.ReportMetric(float64(falseDowns), "false-downs")
	b.ReportMetric(float64(notAlive), "not-alive-at-start")
}

// agentDeathMode is one way of ending an agent and what it measured.
type agentDeathMode struct {
	name string
	act  func(a *realAgent) error
	// asUser runs the victims under a user id of their own (netCutter).
	asUser bool
	times  []time.Duration
	// by counts the hosts each path marked down while this mode's
	// victims were measured.
	by map[string]uint64
}

// measure signals a and waits until its hosts are down on every server.
func (m *agentDeathMode) measure(b *testing.B, servers []*Server, a *realAgent, watch *falseDownWatch) {
	b.Helper()
	hosts := a.hosts(servers[0])
	if len(hosts) == 0 {
		b.Fatalf("agent %s has no host", a.name)
	}
	for _, h := range hosts {
		watch.killed(h)
	}
	before := markedDown(servers)
	start := time.Now()
	if err := m.act(a); err != nil {
		b.Fatalf("%s %s: %v", m.name, a.name, err)
	}
	var took time.Duration
	for _, h := range hosts {
		took = waitStatusEverywhere(b, servers, h, structs.HostStatusDown, start)
	}
	after := markedDown(servers)
	if m.by == nil {
		m.by = map[string]uint64{}
	}
	for k, v := range after {
		m.by[k] += v - before[k]
	}
	m.times = append(m.times, took)
	b.Logf("%s %s (pid %d): its host down on every server after %v", m.name, a.name, a.cmd.Process.Pid, took)
}

// report prints the mode's p50, max and paths.
func (m *agentDeathMode) report(b *testing.B) {
	if len(m.times) == 0 {
		return
	}
	p50, _ := percentiles(m.times)
	worst := m.times[0]
	for _, t := range m.times {
		worst = max(worst, t)
	}
	b.ReportMetric(p50.Seconds(), m.name+"-p50-s")
	b.ReportMetric(worst.Seconds(), m.name+"-max-s")
	for path, n := range m.by {
		b.ReportMetric(float64(n), m.name+"-downs-by-"+path)
	}
	b.Logf("%s: %d agents, host down p50 %v max %v; hosts marked down by path while measured: %v",
		m.name, len(m.times), p50, worst, m.by)
}

// signal is the act of sending a's process sig.
func signal(sig syscall.Signal) func(a *realAgent) error {
	return func(a *realAgent) error { return a.cmd.Process.Signal(sig) }
}

// markedDown sums every server's counts of hosts marked down, by path.
func markedDown(servers []*Server) map[string]uint64 {
	out := map[string]uint64{}
	for _, s := range servers {
		for k, v := range s.HostsMarkedDown() {
			out[k] += v
		}
	}
	return out
}

// waitAllHostsUp waits until every server has at least want hosts, all up.
func waitAllHostsUp(b *testing.B, servers []*Server, want int) {
	b.Helper()
	waitFor(b, "every host up on every server", 10*time.Minute, func() error {
		for _, s := range servers {
			if up, all := hostsUp(s); up != all || all < want {
				return fmt.Errorf("%s has %d of %d hosts up, want %d", s.config.NodeName, up, all, want)
			}
		}
		return nil
	})
}

// realAgent is one `cloudctl agent --client` process.
type realAgent struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	// uid is the user the process runs as (0: this process's);
	// gossipPort is its gossip port.
	uid        int
	gossipPort string
}

// hosts are the ids of the hosts a's process registered, as s sees them.
func (a *realAgent) hosts(s *Server) []string {
	all, _ := s.fsm.State().Hosts(nil)
	var ids []string
	for _, h := range all {
		if h.GossipMember == a.name {
			ids = append(ids, h.ID)
		}
	}
	return ids
}

// startRealAgents starts n client agents joined through the servers'
// gossip addresses and waits for each one's banner; agent i runs under a
// user of its own (cut.user) when asUser(i). Each is SIGKILLed (and
// reaped) when the benchmark ends, stopped or not.
func startRealAgents(b *testing.B, bin string, servers []*Server, n int, asUser func(int) bool, cut *netCutter) []*realAgent {
	b.Helper()
	var join []string
	for _, s := range servers {
		join = append(join, "--join", s.Gossip().Addr())
	}
	agents := make([]*realAgent, n)
	for i := range agents {
		name := fmt.Sprintf("real-agent-%02d", i)
		uid, dir := 0, b.TempDir()
		if asUser(i) {
			uid, dir = cut.user(b, i)
		}
		args := append([]string{"agent", "--client", "--node-name", name, "--bind", "127.0.0.1",
			"--http-port", "0", "--rpc-port", "0", "--gossip-port", "0", "--data-dir", dir,
			"--region", servers[0].config.Region, "-acl=false", "--log-level", "warn"}, join...)
		a, err := startRealAgent(bin, name, args, filepath.Join(b.TempDir(), name+".log"), uid)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_ = a.cmd.Process.Signal(syscall.SIGKILL)
			<-a.done
		})
		agents[i] = a
	}
	return agents
}

// startRealAgent starts one agent, its log in logPath, and waits (up to
// a minute) for the last line of its banner.
func startRealAgent(bin, name string, args []string, logPath string, uid int) (*realAgent, error) {
	logs, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("agent %s log: %w", name, err)
	}
	defer logs.Close() // the child holds its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if uid != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("agent %s stdout: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start agent %s: %w", name, err)
	}
	a := &realAgent{name: name, cmd: cmd, done: make(chan struct{}), uid: uid}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		seen := false
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if addr, ok := strings.CutPrefix(line, "Gossip:"); ok && !seen {
				_, a.gossipPort, _ = strings.Cut(strings.TrimSpace(addr), ":")
			}
			if !seen && strings.HasPrefix(line, "Data") {
				seen = true
				ready <- true
			}
		}
		if !seen {
			ready <- false
		}
	}()
	go func() { _ = cmd.Wait(); close(a.done) }()
	select {
	case ok := <-ready:
		if ok {
			return a, nil
		}
		return nil, fmt.Errorf("agent %s exited before its banner", name)
	case <-time.After(time.Minute):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-a.done
		return nil, fmt.Errorf("agent %s printed no banner in a minute", name)
	}
}

// cloudctlBinary is STRATUS_CLOUDCTL, or cloudctl built from this tree
// into the benchmark's temporary directory.
func cloudctlBinary(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("STRATUS_CLOUDCTL"); bin != "" {
		return bin
	}
	_, file, _, _ := runtime.Caller(0)
	// Not in b.TempDir (0700): the cut victims run as another user.
	dir, err := os.MkdirTemp("", "stratus-bench-cloudctl-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "cloudctl")
	build := exec.Command("go", "build", "-o", bin, "./cmd/cloudctl")
	build.Dir = filepath.Dir(filepath.Dir(file))
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build cloudctl: %v\n%s", err, out)
	}
	return bin
}
