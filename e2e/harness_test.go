package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cloudctlBin is built once per test binary run, with the race detector
// unless the run is benchmarking (a race-built agent's timings and
// footprint would be the detector's, not the agent's).
var cloudctlBin string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "stratus-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cloudctlBin = filepath.Join(dir, "cloudctl")
	_, file, _, _ := runtime.Caller(0)
	args := []string{"build", "-o", cloudctlBin}
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "./cmd/cloudctl")...)
	build.Dir = filepath.Dir(filepath.Dir(file))
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build cloudctl: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// agentProc is one running `cloudctl agent` process.
type agentProc struct {
	name    string
	cmd     *exec.Cmd
	dataDir string
	http    string // http://ip:port
	rpc     string
	gossip  string
	logs    *syncBuffer
	done    chan struct{}
}

// raceWarning starts each report of a race-built binary's detector.
const raceWarning = "WARNING: DATA RACE"

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// startAgent runs `cloudctl agent` with args plus random loopback ports,
// waits for its banner and registers cleanup that kills it.
func startAgent(t testing.TB, name string, args ...string) *agentProc {
	t.Helper()
	return startAgentIn(t, name, t.TempDir(), args...)
}

// startAgentIn is startAgent with a given data dir, to restart an agent
// with its state.
func startAgentIn(t testing.TB, name, dataDir string, args ...string) *agentProc {
	t.Helper()
	p := &agentProc{name: name, dataDir: dataDir, logs: &syncBuffer{}, done: make(chan struct{})}
	full := append([]string{"agent", "--node-name", name, "--bind", "127.0.0.1",
		"--http-port", "0", "--rpc-port", "0", "--gossip-port", "0", "--data-dir", p.dataDir}, args...)
	acl := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(strings.TrimLeft(a, "-"), "acl") })
	if !acl {
		// These tests are about clustering, boots and restarts, not
		// authentication (agent, command, e2e/ui and e2e/robustness test
		// that): production agents' native API is opened for them.
		full = append(full, "-acl=false")
	}
	p.cmd = exec.Command(cloudctlBin, full...)
	p.cmd.Stderr = p.logs
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.kill()
		logs := p.logs.String()
		if i := strings.Index(logs, raceWarning); i >= 0 {
			t.Errorf("the race detector caught a data race in agent %s:\n%s", name, logs[i:])
		} else if t.Failed() {
			t.Logf("logs of %s:\n%s", name, logs)
		}
	})
	banner := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ready := false
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			key, val, _ := strings.Cut(line, ":")
			val = strings.TrimSpace(val)
			switch key {
			case "HTTP":
				p.http = val
				if !strings.HasPrefix(val, "http") {
					p.http = "http://" + val
				}
			case "RPC":
				p.rpc = val
			case "Gossip":
				p.gossip = val
			case "Data":
				if !ready {
					ready = true
					banner <- nil
				}
			}
		}
		if !ready {
			banner <- fmt.Errorf("agent %s exited before its banner", name)
		}
	}()
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	select {
	case err := <-banner:
		if err != nil {
			t.Fatalf("%v\n%s", err, p.logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("agent %s printed no banner\n%s", name, p.logs.String())
	}
	if !acl && slices.ContainsFunc(args, func(a string) bool { return strings.TrimLeft(a, "-") == "dev" }) {
		waitDevSeeded(t, p)
	}
	return p
}

// waitDevSeeded waits until a dev agent's flavors are seeded, as a user
// of `make dev` waits for them: dev mode seeds them last, once its hosts
// are up and its image is active, so a test may then boot at once.
func waitDevSeeded(t testing.TB, p *agentProc) {
	t.Helper()
	eventually(t, p.name+"'s dev flavors", 60*time.Second, func() error {
		resp, err := http.Get(p.http + "/v1/flavors")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var flavors []json.RawMessage
		if err := json.NewDecoder(resp.Body).Decode(&flavors); err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /v1/flavors: %d %v", resp.StatusCode, err)
		}
		if len(flavors) < 5 {
			return fmt.Errorf("%d flavors", len(flavors))
		}
		return nil
	})
}

// kill SIGKILLs the process and waits for it to exit.
func (p *agentProc) kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.done
}

// cli runs cloudctl against addr and returns stdout, stderr and the exit code.
func cli(t testing.TB, addr string, args ...string) (string, string, int) {
	t.Helper()
	return runCmd(t, cloudctlBin, append(os.Environ(), "CLOUDCTL_ADDR="+addr), args...)
}

// runCmd runs a program with env and returns stdout, stderr and the exit
// code; failing to start it at all fails the test.
func runCmd(t testing.TB, bin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", bin, err)
	}
	return out.String(), errb.String(), code
}

// eventually retries fn until it returns nil or the timeout passes.
func eventually(t testing.TB, what string, timeout time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
