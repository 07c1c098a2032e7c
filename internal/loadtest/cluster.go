// Package loadtest drives a Stratus cluster of real `cloudctl agent`
// processes with many concurrent API clients and reports error rates,
// latencies, memory and Raft storage growth. scripts/load is its command
// line; it is a tool that prints figures, not a unit test, and it must
// not be imported by production code.
package loadtest

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is one running `cloudctl agent`.
type Proc struct {
	Name    string
	DataDir string
	HTTP    string // base URL, http://127.0.0.1:port
	RPC     string
	Gossip  string
	cmd     *exec.Cmd
	done    chan struct{}
	logPath string
}

// StartAgent runs `cloudctl agent` on loopback with random ports and
// waits for its banner. Its logs go to <dataDir>.log.
func StartAgent(bin, name, dataDir string, args ...string) (*Proc, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir of %s: %w", name, err)
	}
	p := &Proc{Name: name, DataDir: dataDir, done: make(chan struct{}), logPath: dataDir + ".log"}
	logf, err := os.Create(p.logPath)
	if err != nil {
		return nil, fmt.Errorf("log of %s: %w", name, err)
	}
	full := append([]string{"agent", "--node-name", name, "--bind", "127.0.0.1", "--http-port", "0",
		"--rpc-port", "0", "--gossip-port", "0", "--data-dir", dataDir, "--log-level", "warn"}, args...)
	p.cmd = exec.Command(bin, full...)
	p.cmd.Stderr = logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		_ = logf.Close()
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		_ = logf.Close()
		close(p.done)
	}()
	banner := make(chan error, 1)
	go p.readBanner(stdout, banner)
	select {
	case err := <-banner:
		if err != nil {
			p.Kill()
			return nil, err
		}
	case <-time.After(60 * time.Second):
		p.Kill()
		return nil, fmt.Errorf("agent %s printed no banner in 60s (log %s)", name, p.logPath)
	}
	return p, nil
}

// readBanner fills the addresses from the agent's start-up banner.
func (p *Proc) readBanner(stdout io.Reader, banner chan<- error) {
	sc := bufio.NewScanner(stdout)
	ready := false
	for sc.Scan() {
		key, val, _ := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		val = strings.TrimSpace(val)
		switch key {
		case "HTTP":
			p.HTTP = val
			if !strings.HasPrefix(val, "http") {
				p.HTTP = "http://" + val
			}
		case "RPC":
			p.RPC = val
		case "Gossip":
			p.Gossip = val
		case "Data":
			if !ready {
				ready = true
				banner <- nil
			}
		}
	}
	if !ready {
		banner <- fmt.Errorf("agent %s exited before its banner (log %s)", p.Name, p.logPath)
	}
}

// Kill SIGKILLs the agent and waits for it.
func (p *Proc) Kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.done
}

// Stop asks the agent to leave (SIGTERM) and waits up to 20s before
// killing it.
func (p *Proc) Stop() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.Kill()
	}
}

// Alive reports whether the process still runs.
func (p *Proc) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// RSS is the process's resident set in bytes, from /proc.
func (p *Proc) RSS() (int64, error) {
	if p.cmd.Process == nil {
		return 0, fmt.Errorf("%s not started", p.Name)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for %s", p.Name)
}

// Storage is the size of a server's Raft log store and snapshots.
type Storage struct {
	RaftDB    int64 // bytes of raft.db files
	Snapshots int64 // bytes under snapshots directories
}

// DiskUsage measures the Raft storage under the agent's data dir.
func (p *Proc) DiskUsage() Storage {
	var s Storage
	_ = filepath.WalkDir(p.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		switch {
		case d.Name() == "raft.db":
			s.RaftDB += info.Size()
		case strings.Contains(path, string(filepath.Separator)+"snapshots"+string(filepath.Separator)):
			s.Snapshots += info.Size()
		}
		return nil
	})
	return s
}

// Cluster is the servers and clients of one load run.
type Cluster struct {
	Servers []*Proc
	Clients []*Proc
	// IntroFile is where the client agents read their node introduction
	// (client { intro_token_file }); Introduce writes it.
	IntroFile string
}

// StartCluster starts servers (bootstrap-expect n) and client agents
// with the fake driver, each with simHosts simulated hosts, under dir.
// serverArgs are extra arguments of every server agent (such as
// --config of a file with a server block).
func StartCluster(bin, dir string, servers, clients, simHosts int, logf func(string, ...any), serverArgs ...string) (*Cluster, error) {
	c := &Cluster{IntroFile: filepath.Join(dir, "intro-token")}
	clientCfg := filepath.Join(dir, "client-intro.hcl")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(clientCfg, []byte(fmt.Sprintf("client {\n  intro_token_file = %q\n}\n", c.IntroFile)), 0o600); err != nil {
		return nil, err
	}
	for i := range servers {
		args := append([]string{"--server", "--bootstrap-expect", strconv.Itoa(servers)}, serverArgs...)
		if i > 0 {
			args = append(args, "--join", c.Servers[0].Gossip)
		}
		p, err := StartAgent(bin, fmt.Sprintf("load-s%d", i+1), filepath.Join(dir, fmt.Sprintf("s%d", i+1)), args...)
		if err != nil {
			c.Stop()
			return nil, err
		}
		logf("server %s: %s (rpc %s)", p.Name, p.HTTP, p.RPC)
		c.Servers = append(c.Servers, p)
	}
	var mu sync.Mutex
	for i := range clients {
		args := []string{"--client", "--driver", "fake", "--join", c.Servers[0].Gossip,
			"--dev-hosts", strconv.Itoa(simHosts), "--config", clientCfg}
		p, err := StartAgent(bin, fmt.Sprintf("load-c%d", i+1), filepath.Join(dir, fmt.Sprintf("c%d", i+1)), args...)
		if err != nil {
			c.Stop()
			return nil, err
		}
		mu.Lock()
		c.Clients = append(c.Clients, p)
		mu.Unlock()
		logf("client %s: %s", p.Name, p.HTTP)
	}
	return c, nil
}

// Stop stops every agent, clients first.
func (c *Cluster) Stop() {
	for _, p := range c.Clients {
		p.Stop()
	}
	for _, p := range c.Servers {
		p.Stop()
	}
}
