package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// The host-death benchmark runs its simulated agents' gossip members in
// child processes (this test binary, re-executed as
// TestHostDeathSimProcess), a few hundred to a process, so that the three
// servers and their Raft run in a Go runtime of their own, as they do in
// production, and not behind the backlog of a thousand members' probes
// and broadcasts; and so that one member process's collector or backlog
// does not stall every member. Each member is a gossip.Pool configured as
// a real agent bound to 127.0.0.1 configures it; like a real agent, each
// also keeps an RPC session open to one server and heartbeats its host
// over it (simSession). The parent drives a child over its stdin and
// stdout, one line a command:
//
//	start <index> <seed,seed…> <rpc addr> <host>  →  SIM started <index> <name> <addr>  (or SIM failed <index> <error>)
//	kill <index>                                  →  SIM killed <index>
//
// and closing the child's stdin shuts its members down and ends it. A
// kill is a process crash: the member stops without a leave and its
// session closes; with STRATUS_BENCH_KILL=member only the member stops
// and the session stays open, silent, as a host that is cut off or
// frozen leaves it, so that only gossip can notice.

const (
	// simProcEnv marks a child process started by startSimProcs.
	simProcEnv = "STRATUS_SIM_PROCESS"
	// simRegionEnv passes the region the members advertise.
	simRegionEnv = "STRATUS_SIM_REGION"
	// simMemEnv passes a child's heap limit, in bytes.
	simMemEnv = "STRATUS_SIM_MEMORY"
	// simReplyPrefix starts every protocol line a child writes, so the
	// test framework's own output is ignored.
	simReplyPrefix = "SIM "
)

// simMemberName is the gossip member name of simulated agent i.
func simMemberName(i int) string { return fmt.Sprintf("sim-agent-%05d", i) }

// simGossipConfig is the gossip configuration of simulated agent i:
// what agent.startClientGossip sets for an agent bound to loopback (the
// Fast timers: probes, suspicion, gossip), with a null logger and, for
// members in child processes, a longer full-state exchange
// (STRATUS_BENCH_SIM_PUSHPULL, 30 s by default; see simPushPull) and
// the broadcast retransmissions STRATUS_BENCH_SIM_RETRANSMIT sets.
func simGossipConfig(i int, region string, child bool) gossip.Config {
	c := gossip.Config{
		NodeName: simMemberName(i),
		BindAddr: "127.0.0.1",
		Fast:     true,
		Logger:   hclog.NewNullLogger(),
		Meta: gossip.Meta{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Role: gossip.RoleClient,
			Region: region, AZ: "nova"},
	}
	if child {
		c.PushPullInterval = simPushPull()
		c.RetransmitMult = envInt("STRATUS_BENCH_SIM_RETRANSMIT", 0)
		if p := simProbe(); p > 0 {
			c.ProbeInterval = p
			c.ProbeTimeout = p / 2
		}
		c.GossipInterval = time.Duration(envInt("STRATUS_BENCH_SIM_GOSSIP", 0)) * time.Millisecond
	}
	return c
}

// simProbe is the simulated agents' probe interval
// (STRATUS_BENCH_SIM_PROBE, in milliseconds; 0 keeps the Fast 200 ms),
// their probe timeout being half of it. See BenchmarkHostDeath for why
// a longer one bounds the figure from above.
func simProbe() time.Duration {
	return time.Duration(envInt("STRATUS_BENCH_SIM_PROBE", 0)) * time.Millisecond
}

// simPushPull is the simulated agents' full-state exchange interval.
// With Fast it is 5 s, which memberlist stretches to 30 s at 1,000
// members; each exchange then sends and merges a thousand members' state
// both ways, which a thousand members sharing two cores pay 33 times a
// second. It only repairs what gossip missed: a member's death reaches
// the servers by gossip, and a server's own exchanges keep the Fast
// interval, so a longer one for the simulated agents can delay the
// servers' view, not hasten it.
func simPushPull() time.Duration {
	return time.Duration(envInt("STRATUS_BENCH_SIM_PUSHPULL", 30)) * time.Second
}

// envInt is the integer in environment variable name, or def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

// startSimMember starts simulated agent i's gossip member and joins the
// pool through one of seeds, retrying every second through the next one
// as an agent retries its join list (gossip.Pool.RetryJoin): under the
// load of a thousand members starting, some joins time out. (Joining
// through all of them at once would exchange the full state with each.)
func startSimMember(i int, region string, seeds []string, child bool) (*gossip.Pool, error) {
	pool, err := gossip.New(simGossipConfig(i, region, child))
	if err != nil {
		return nil, fmt.Errorf("start member %d: %w", i, err)
	}
	for attempt := 1; ; attempt++ {
		_, err := pool.Join([]string{seeds[(attempt-1)%len(seeds)]})
		if err == nil {
			return pool, nil
		}
		if attempt == 30 {
			_ = pool.Shutdown()
			return nil, fmt.Errorf("member %d: %w", i, err)
		}
		time.Sleep(time.Second)
	}
}

// TestHostDeathSimProcess is the child process of BenchmarkHostDeath;
// it does nothing unless started by it (simProcEnv set).
func TestHostDeathSimProcess(t *testing.T) {
	if os.Getenv(simProcEnv) == "" {
		t.Skip("child process of BenchmarkHostDeath")
	}
	if err := runSimProcess(os.Stdin, os.Stdout, os.Getenv(simRegionEnv)); err != nil {
		t.Fatal(err)
	}
}

// runSimProcess serves the parent's commands until in closes, then shuts
// every member down.
func runSimProcess(in io.Reader, out io.Writer, region string) error {
	// A few hundred members share this heap, whose collector would
	// otherwise run several times a second and stall them all: by
	// default collect only when it reaches the limit the parent passes
	// (simMemory); STRATUS_BENCH_SIM_GOGC collects at that multiple of
	// the live heap instead (a process of 250 members allocates tens of
	// MB a second, so without it the limit is reached within minutes and
	// the collector then runs back to back).
	debug.SetGCPercent(envInt("STRATUS_BENCH_SIM_GOGC", -1))
	limit := int64(1) << 30
	if v, err := strconv.ParseInt(os.Getenv(simMemEnv), 10, 64); err == nil && v > 0 {
		limit = v
	}
	debug.SetMemoryLimit(limit)
	var (
		mu      sync.Mutex
		members = map[int]*simMember{}
		wg      sync.WaitGroup
	)
	reply := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, simReplyPrefix+format+"\n", args...)
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		i, err := strconv.Atoi(f[1])
		if err != nil {
			return fmt.Errorf("bad command %q: %w", sc.Text(), err)
		}
		switch {
		case f[0] == "start" && len(f) == 5:
			wg.Add(1)
			go func() {
				defer wg.Done()
				pool, err := startSimMember(i, region, strings.Split(f[2], ","), true)
				if err != nil {
					reply("failed %d %v", i, err)
					return
				}
				m := &simMember{pool: pool, session: startSimSession(f[3], f[4])}
				mu.Lock()
				members[i] = m
				mu.Unlock()
				reply("started %d %s %s", i, simMemberName(i), pool.Addr())
			}()
		case f[0] == "kill":
			mu.Lock()
			m := members[i]
			delete(members, i)
			mu.Unlock()
			if m != nil {
				m.kill(os.Getenv("STRATUS_BENCH_KILL") == "member")
			}
			reply("killed %d", i)
		default:
			return fmt.Errorf("unknown command %q", sc.Text())
		}
	}
	wg.Wait()
	var sd sync.WaitGroup
	for _, m := range members {
		sd.Add(1)
		go func() { defer sd.Done(); m.kill(false) }()
	}
	sd.Wait()
	return sc.Err()
}

// simMember is one simulated agent in a child process: its gossip
// member and its RPC session.
type simMember struct {
	pool    *gossip.Pool
	session *simSession
}

// kill stops the member without a leave, as a crash, and ends its
// session: closes it, or with keepSession only stops its heartbeats.
func (m *simMember) kill(keepSession bool) {
	_ = m.pool.Shutdown()
	m.session.stop(keepSession)
}

// simSession is a simulated agent's RPC session to one server, over
// which it heartbeats its host as a real agent does: at once, then
// every half of the TTL the server answers, retrying every half second
// after a failure (the host may not be registered yet).
type simSession struct {
	conns *rpc.ConnPool
	quit  chan struct{}
	done  chan struct{}
}

// startSimSession opens the session to addr and starts heartbeating host.
func startSimSession(addr, host string) *simSession {
	s := &simSession{conns: rpc.NewConnPool(rpc.PoolConfig{Logger: hclog.NewNullLogger()}),
		quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		wait := time.Duration(0)
		for {
			select {
			case <-s.quit:
				return
			case <-time.After(wait):
			}
			var resp structs.HostRegisterResponse
			err := s.conns.RPC(addr, "Host.Heartbeat", &structs.HostHeartbeatRequest{HostIDs: []string{host}}, &resp)
			wait = resp.HeartbeatTTL / 2
			if err != nil || wait <= 0 {
				wait = 500 * time.Millisecond
			}
		}
	}()
	return s
}

// stop ends the heartbeats and, unless keepOpen, closes the session.
func (s *simSession) stop(keepOpen bool) {
	close(s.quit)
	<-s.done
	if !keepOpen {
		_ = s.conns.Shutdown()
	}
}

// simProc is the parent's handle on one child process.
type simProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser

	mu      sync.Mutex
	waiting map[string]chan string // "started 12" etc. → the rest of the reply
	exited  chan struct{}
	err     error // why the child's output ended
}

// startSimProcs starts n child processes and stops them (closing their
// stdin, killing any that does not exit within a minute) when b ends.
func startSimProcs(b *testing.B, n int, region string) []*simProc {
	b.Helper()
	procs := make([]*simProc, 0, n)
	limit := simMemory(n)
	for range n {
		p, err := startSimProc(region, limit)
		if err != nil {
			b.Fatal(err)
		}
		procs = append(procs, p)
		b.Cleanup(p.stop)
	}
	return procs
}

// simMemory is the heap each of n member processes may reach before
// its collector must run: STRATUS_BENCH_SIM_MEMORY (MiB, all of them
// together; the machine has 24 GiB) shared out, or 1 GiB each.
func simMemory(n int) int64 {
	if v := envInt("STRATUS_BENCH_SIM_MEMORY", 0); v > 0 {
		return int64(v) << 20 / int64(max(n, 1))
	}
	return 1 << 30
}

// startSimProc starts one member process whose heap is collected only
// when it reaches limit bytes.
func startSimProc(region string, limit int64) (*simProc, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostDeathSimProcess$", "-test.bench=^$",
		"-test.count=1", "-test.timeout=0")
	cmd.Env = append(os.Environ(), simProcEnv+"=1", simRegionEnv+"="+region,
		simMemEnv+"="+strconv.FormatInt(limit, 10))
	if n := envInt("STRATUS_BENCH_SIM_GOMAXPROCS", 0); n > 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(n))
	}
	cmd.Stderr = os.Stderr
	// Never outlive the benchmark, whatever happens to it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("member process stdin: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("member process stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start member process: %w", err)
	}
	p := &simProc{cmd: cmd, stdin: stdin, waiting: map[string]chan string{}, exited: make(chan struct{})}
	go p.readReplies(stdout)
	return p, nil
}

// readReplies hands each reply to whoever waits for it.
func (p *simProc) readReplies(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), simReplyPrefix)
		if !ok {
			continue
		}
		f := strings.SplitN(line, " ", 3)
		if len(f) < 2 {
			continue
		}
		rest := ""
		if len(f) == 3 {
			rest = f[2]
		}
		// "failed <index> <error>" answers "start <index>".
		key := f[0] + " " + f[1]
		if f[0] == "failed" {
			key, rest = "started "+f[1], "failed "+rest
		}
		p.mu.Lock()
		ch := p.waiting[key]
		delete(p.waiting, key)
		p.mu.Unlock()
		if ch != nil {
			ch <- rest
		}
	}
	p.mu.Lock()
	p.err = errors.Join(errors.New("member process ended"), sc.Err())
	p.mu.Unlock()
	close(p.exited)
}

// call sends cmd and waits (up to five minutes: a start retries its
// join 30 times, each up to a join timeout and a second's pause) for
// the reply to key.
func (p *simProc) call(cmd, key string) (string, error) {
	ch := make(chan string, 1)
	p.mu.Lock()
	p.waiting[key] = ch
	p.mu.Unlock()
	if _, err := io.WriteString(p.stdin, cmd+"\n"); err != nil {
		return "", fmt.Errorf("member process: send %q: %w", cmd, err)
	}
	select {
	case rest := <-ch:
		return rest, nil
	case <-p.exited:
		return "", p.err
	case <-time.After(5 * time.Minute):
		return "", fmt.Errorf("member process: no reply to %q in 5 minutes", cmd)
	}
}

// start starts member i in the child, joined through seeds, with an RPC
// session to rpcAddr heartbeating host, and returns its gossip address.
func (p *simProc) start(i int, seeds []string, rpcAddr, host string) (string, error) {
	rest, err := p.call(fmt.Sprintf("start %d %s %s %s", i, strings.Join(seeds, ","), rpcAddr, host), fmt.Sprintf("started %d", i))
	if err != nil {
		return "", err
	}
	if msg, failed := strings.CutPrefix(rest, "failed "); failed {
		return "", errors.New(msg)
	}
	f := strings.Fields(rest)
	if len(f) != 2 || f[0] != simMemberName(i) {
		return "", fmt.Errorf("member process: unexpected reply %q to start %d", rest, i)
	}
	return f[1], nil
}

// kill shuts member i down without a leave, as a crash.
func (p *simProc) kill(i int) error {
	_, err := p.call(fmt.Sprintf("kill %d", i), fmt.Sprintf("killed %d", i))
	return err
}

// stop ends the child: it shuts its members down when its stdin closes.
func (p *simProc) stop() {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
	}
	_ = p.cmd.Wait()
}
