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

// cloudctlBin is built once per test binary run.
var cloudctlBin string

func TestMain(m *testing.M) {
	if os.Getenv("STRATUS_ROBUSTNESS") == "" {
		os.Exit(m.Run()) // the tests skip themselves
	}
	dir, err := os.MkdirTemp("", "stratus-robustness-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cloudctlBin = filepath.Join(dir, "cloudctl")
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command("go", "build", "-o", cloudctlBin, "./cmd/cloudctl")
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build cloudctl: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// proc is one `cloudctl agent` process, restartable on the same data dir
// and ports.
type proc struct {
	name    string
	server  bool
	bindIP  string
	args    []string
	dataDir string
	http    string // http://ip:port
	ports   [3]string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	stopped bool // SIGSTOPped
	logs    *syncBuffer
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
	cmd := exec.Command(cloudctlBin, full...)
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
}

func (c *cluster) all() []*proc { return append(append([]*proc{}, c.servers...), c.clients...) }

// startCluster starts nServers servers on their own loopback addresses
// (so a partition can drop one server's packets) and nClients fake-driver
// clients. dataDirs may name a prepared data dir per server ("" for a
// temp dir).
func startCluster(t *testing.T, ipBase string, nServers, nClients int, dataDirs map[int]string) *cluster {
	t.Helper()
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
		if i > 0 {
			p.args = append(p.args, "--join", c.servers[0].gossipAddr())
		}
		p.start(t)
		c.servers = append(c.servers, p)
	}
	for i := 0; i < nClients; i++ {
		p := &proc{name: fmt.Sprintf("c%d", i+1), bindIP: fmt.Sprintf("%s.%d", ipBase, 100+i),
			dataDir: t.TempDir(), logs: &syncBuffer{}}
		p.args = []string{"--client", "--config", clientCfg}
		for _, s := range c.servers {
			p.args = append(p.args, "--join", s.gossipAddr())
		}
		p.start(t)
		c.clients = append(c.clients, p)
	}
	t.Cleanup(func() {
		for _, p := range c.all() {
			p.kill()
			if t.Failed() {
				t.Logf("last logs of %s:\n%s", p.name, tail(p.logs.String(), 200))
			}
		}
	})
	return c
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
