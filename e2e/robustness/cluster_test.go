package robustness

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cloudctlBin is built once per test binary run, with the race
// detector: a data race in the agent under faults fails the agent (and so
// the suite) instead of going unseen.
var cloudctlBin string

// buildDir holds the binaries the run builds.
var buildDir string

// clockStepErr says why cloudctlBin was built without the clock-step
// overlay (nil: its agents step their wall clock on request).
var clockStepErr error

func TestMain(m *testing.M) {
	if os.Getenv("STRATUS_ROBUSTNESS") == "" {
		os.Exit(m.Run()) // the tests skip themselves
	}
	dir, err := os.MkdirTemp("", "stratus-robustness-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	flags := []string{"-race"}
	if overlay, err := clockStepOverlay(dir); err != nil {
		clockStepErr = fmt.Errorf("no clock-step build: %w", err)
	} else {
		flags = append(flags, "-overlay", overlay)
	}
	cloudctlBin, err = buildCloudctl("cloudctl", flags...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// buildCloudctl builds ./cmd/cloudctl into the build dir with flags.
func buildCloudctl(name string, flags ...string) (string, error) {
	bin := filepath.Join(buildDir, name)
	_, file, _, _ := runtime.Caller(0)
	args := append(append([]string{"build"}, flags...), "-o", bin, "./cmd/cloudctl")
	build := exec.Command("go", args...)
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin, nil
}

// proc is one `cloudctl agent` process, restartable on the same data dir
// and ports.
type proc struct {
	name    string
	server  bool
	bindIP  string
	args    []string
	dataDir string
	// bin is the cloudctl binary to run ("" for cloudctlBin).
	bin string
	// cgroup is the cgroup v2 the process runs in, so network faults
	// can name what it sends; "" without network faults.
	cgroup string
	// clockFile is the file its wall clock's step is read from ("":
	// never stepped).
	clockFile string
	http      string // http://ip:port
	ports     [3]string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	stopped bool // SIGSTOPped
	// incarnation counts the starts: a restarted server may answer
	// stale reads from behind what its previous run served.
	incarnation int
	logs        *syncBuffer
}

func (p *proc) incarnationNow() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.incarnation
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// race keeps the first data race report from the start (the
	// buffer keeps only the tail).
	race []byte
}

const raceWarning = "WARNING: DATA RACE"

// raceReport returns the first data race report the process printed, if
// any (or its first 16 KiB).
func (s *syncBuffer) raceReport() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.race)
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := bytes.Index(p, []byte(raceWarning)); i >= 0 && s.race == nil {
		s.race = append([]byte{}, p[i:]...)
	} else if s.race != nil && len(s.race) < 16<<10 {
		s.race = append(s.race, p[:min(len(p), 16<<10-len(s.race))]...)
	}
	// Keep the tail only: the suite runs long.
	if s.buf.Len() > 4<<20 {
		tail := append([]byte(nil), s.buf.Bytes()[s.buf.Len()-(1<<20):]...)
		s.buf.Reset()
		s.buf.Write(tail)
	}
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// start runs the process and waits for its banner; the first start
// records the ports it picked so restarts keep them.
func (p *proc) start(t *testing.T) {
	t.Helper()
	ports := p.ports
	for i := range ports {
		if ports[i] == "" {
			ports[i] = "0" // first start, or a port the role does not use
		}
	}
	http, rpc, gossip := ports[0], ports[1], ports[2]
	full := append([]string{"agent", "--node-name", p.name, "--bind", p.bindIP,
		"--http-port", http, "--rpc-port", rpc, "--gossip-port", gossip, "--data-dir", p.dataDir}, p.args...)
	bin := p.bin
	if bin == "" {
		bin = cloudctlBin
	}
	cmd := exec.Command(bin, full...)
	if p.cgroup != "" {
		// The shell joins the cgroup before it becomes the agent, so
		// every socket the agent opens is the cgroup's.
		cmd = exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, p.cgroup, bin}, full...)...)
	}
	if p.clockFile != "" {
		cmd.Env = append(os.Environ(), clockStepEnv+"="+p.clockFile)
	}
	cmd.Stderr = p.logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.done, p.stopped = cmd, done, false
	p.incarnation++
	p.mu.Unlock()
	banner := make(chan map[string]string, 1)
	go func() {
		seen := map[string]string{}
		sent := false
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			key, val, _ := strings.Cut(strings.TrimSpace(sc.Text()), ":")
			if sent {
				continue
			}
			seen[key] = strings.TrimSpace(val)
			if key == "Data" {
				banner <- seen
				sent = true
			}
		}
		if !sent {
			close(banner)
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case seen, ok := <-banner:
		if !ok {
			t.Fatalf("agent %s exited before its banner\n%s", p.name, p.logs.String())
		}
		if p.ports[0] == "" {
			p.ports = [3]string{portOf(seen["HTTP"]), portOf(seen["RPC"]), portOf(seen["Gossip"])}
			p.http = "http://" + p.bindIP + ":" + p.ports[0]
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("agent %s printed no banner\n%s", p.name, p.logs.String())
	}
}

func portOf(addr string) string {
	addr = strings.TrimPrefix(strings.TrimPrefix(addr, "http://"), "https://")
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		return addr[i+1:]
	}
	return addr
}

func (p *proc) gossipAddr() string { return p.bindIP + ":" + p.ports[2] }

func (p *proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(sig)
	}
	switch sig {
	case syscall.SIGSTOP:
		p.stopped = true
	case syscall.SIGCONT:
		p.stopped = false
	}
}

// kill SIGKILLs the process (continuing it first if paused) and waits
// for it to exit.
func (p *proc) kill() {
	p.signal(syscall.SIGKILL)
	p.signal(syscall.SIGCONT)
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done != nil {
		<-done
	}
}

// running reports whether the process is alive.
func (p *proc) running() bool {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// cluster is the set of processes of one run.
type cluster struct {
	servers []*proc
	clients []*proc
	// introFile is where the client agents read their node
	// introduction (client { intro_token_file }); bootstrapAdmin writes
	// it once an administrator exists to issue one.
	introFile string
	// delays relays what every agent dials to a server's RPC port, so
	// one server's traffic can be delayed; nil without network faults.
	delays *delayNet
}

func (c *cluster) all() []*proc { return append(append([]*proc{}, c.servers...), c.clients...) }

// startCluster starts spec.servers servers on their own loopback
// addresses (so a partition can drop one server's packets) and
// spec.clients fake-driver clients.
// clusterSpec says what startCluster starts.
type clusterSpec struct {
	ipBase           string
	servers, clients int
	dataDirs         map[int]string // a prepared data dir per server index
	net              *netFaults     // nil: no cgroups, no network faults
	bin              string         // "" for cloudctlBin
	// delays routes every agent's connections to the servers' RPC
	// ports through delay links (needs net).
	delays bool
	// clockSteps gives each server a clock-step file (needs a
	// cloudctl built with the clock-step overlay).
	clockSteps bool
}

func startCluster(t *testing.T, spec clusterSpec) *cluster {
	t.Helper()
	ipBase, nServers, nClients, dataDirs, net := spec.ipBase, spec.servers, spec.clients, spec.dataDirs, spec.net
	cfgDir := t.TempDir()
	c := &cluster{introFile: filepath.Join(cfgDir, "intro-token")}
	clientCfg := filepath.Join(cfgDir, "client.hcl")
	cfg := fmt.Sprintf("client {\n  fake_spawn_latency = \"500ms\"\n  intro_token_file = %q\n}\n", c.introFile)
	if err := os.WriteFile(clientCfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < nServers; i++ {
		dir := dataDirs[i]
		if dir == "" {
			dir = t.TempDir()
		}
		p := &proc{name: fmt.Sprintf("s%d", i+1), server: true, bindIP: fmt.Sprintf("%s.%d", ipBase, i+1),
			dataDir: dir, logs: &syncBuffer{}}
		p.args = []string{"--server", "--bootstrap-expect", fmt.Sprint(nServers)}
		p.cgroup, p.bin = cgroupOf(t, net, p.name), spec.bin
		if spec.clockSteps {
			p.clockFile = filepath.Join(cfgDir, "clock-"+p.name)
		}
		c.servers = append(c.servers, p)
	}
	for i := 0; i < nClients; i++ {
		p := &proc{name: fmt.Sprintf("c%d", i+1), bindIP: fmt.Sprintf("%s.%d", ipBase, 100+i),
			dataDir: t.TempDir(), logs: &syncBuffer{}}
		p.args = []string{"--client", "--config", clientCfg}
		p.cgroup, p.bin = cgroupOf(t, net, p.name), spec.bin
		c.clients = append(c.clients, p)
	}
	// Registered before any start, so it runs after the processes'
	// cleanup below: the links outlive their connections.
	if spec.delays && net != nil {
		c.delays = routeThroughDelays(t, net, c)
	}
	t.Cleanup(func() {
		for _, p := range c.all() {
			p.kill()
			if t.Failed() {
				t.Logf("last logs of %s:\n%s", p.name, tail(p.logs.String(), 200))
			}
		}
	})
	for i, p := range c.servers {
		if i > 0 {
			p.args = append(p.args, "--join", c.servers[0].gossipAddr())
		}
		p.start(t)
	}
	for _, p := range c.clients {
		for _, s := range c.servers {
			p.args = append(p.args, "--join", s.gossipAddr())
		}
		p.start(t)
	}
	return c
}

// routeThroughDelays picks each server's RPC port before it starts and
// routes what every other agent dials to it through a delay link, so
// that no connection between agents bypasses the links.
func routeThroughDelays(t *testing.T, net *netFaults, c *cluster) *delayNet {
	d, err := newDelayNet(net)
	if !requireOrSkip(t, "packet delay", err) {
		return nil
	}
	t.Cleanup(d.close)
	for _, s := range c.servers {
		port, err := freePort(s.bindIP)
		if err != nil {
			t.Fatal(err)
		}
		s.ports[1] = port
		for _, a := range c.all() {
			if a == s {
				continue
			}
			if err := d.route(a.name, s.name, s.bindIP+":"+port); err != nil {
				t.Fatal(err)
			}
		}
	}
	return d
}

func cgroupOf(t *testing.T, net *netFaults, name string) string {
	if net == nil {
		return ""
	}
	dir, err := net.cgroupFor(name)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func tail(s string, lines int) string {
	parts := strings.Split(s, "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	return strings.Join(parts, "\n")
}

// eventually retries fn until it returns nil or the timeout passes.
func eventually(t *testing.T, what string, timeout time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
