package robustness

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// delaySpec is how long a link holds what it relays: base plus a
// uniform jitter of up to jitter, drawn per read.
type delaySpec struct {
	base, jitter time.Duration
}

func (s *delaySpec) String() string {
	if s == nil {
		return "none"
	}
	return fmt.Sprintf("%s+[0,%s]", s.base, s.jitter)
}

// hold draws one chunk's delay (0 without a spec).
func (s *delaySpec) hold() time.Duration {
	if s == nil {
		return 0
	}
	d := s.base
	if s.jitter > 0 {
		d += rand.N(s.jitter + 1)
	}
	return d
}

// delayLink relays the connections one agent dials to one server's RPC
// port (Raft and agent RPC share it), holding each chunk it reads for
// the delay currently set on its direction. Each direction has one
// reader and one writer in FIFO order, so jitter never reorders bytes
// within a connection. No delay set, it relays at once.
type delayLink struct {
	from, to string // the dialling agent's and the server's names
	ln       net.Listener
	target   string // the server's RPC address

	// up is what the dialler sends, down what the server answers.
	up, down atomic.Pointer[delaySpec]

	// now and wait are the clock; a test replaces wait to see what
	// the link holds, and must still wait (or return) for the relay to
	// go on.
	now  func() time.Time
	wait func(received, release time.Time, done <-chan struct{})

	// Counters for the run's log: connections relayed, and the chunks
	// held with the time they really waited before being written.
	accepted, heldChunks, heldNanos atomic.Int64

	done  chan struct{}
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// newDelayLink listens on 127.0.0.1 and relays to target.
func newDelayLink(from, to, target string) (*delayLink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("delay link %s→%s: %w", from, to, err)
	}
	l := &delayLink{from: from, to: to, ln: ln, target: target, now: time.Now, wait: sleepUntil,
		done: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

func sleepUntil(_, release time.Time, done <-chan struct{}) {
	d := time.Until(release)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}

func (l *delayLink) addr() string { return l.ln.Addr().String() }

func (l *delayLink) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return // closed
		}
		l.accepted.Add(1)
		l.wg.Add(1)
		go l.relay(c)
	}
}

func (l *delayLink) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.done:
		return false
	default:
	}
	l.conns[c] = struct{}{}
	return true
}

func (l *delayLink) untrack(cs ...net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range cs {
		delete(l.conns, c)
		_ = c.Close()
	}
}

// relay dials the server for one accepted connection and pipes both
// ways until both ends are done. A server that cannot be reached (down,
// cut off) closes the dialler's connection, as a refused dial would.
func (l *delayLink) relay(client net.Conn) {
	defer l.wg.Done()
	if !l.track(client) {
		_ = client.Close()
		return
	}
	server, err := net.DialTimeout("tcp", l.target, 5*time.Second)
	if err != nil || !l.track(server) {
		if server != nil {
			_ = server.Close()
		}
		l.untrack(client)
		return
	}
	var both sync.WaitGroup
	both.Add(2)
	go func() { defer both.Done(); l.pipe(server, client, &l.up) }()
	go func() { defer both.Done(); l.pipe(client, server, &l.down) }()
	both.Wait()
	l.untrack(client, server)
}

type chunk struct {
	data              []byte
	received, release time.Time
}

// pipe copies src to dst, each chunk held for the delay set when it was
// read. A read error ends the direction (a half close is passed on); a
// write error ends the connection both ways.
func (l *delayLink) pipe(dst, src net.Conn, delay *atomic.Pointer[delaySpec]) {
	chunks := make(chan chunk, 64)
	go func() {
		defer close(chunks)
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				now := l.now()
				chunks <- chunk{append([]byte(nil), buf[:n]...), now, now.Add(delay.Load().hold())}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range chunks {
		l.wait(c.received, c.release, l.done)
		if c.release.After(c.received) {
			l.heldChunks.Add(1)
			l.heldNanos.Add(int64(l.now().Sub(c.received)))
		}
		if _, err := dst.Write(c.data); err != nil {
			_ = src.Close()
			_ = dst.Close()
			for range chunks { // until the reader sees its closed conn
			}
			return
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	} else {
		_ = dst.Close()
	}
}

// close stops the link and every connection it relays, and waits for
// its goroutines.
func (l *delayLink) close() {
	l.mu.Lock()
	select {
	case <-l.done:
		l.mu.Unlock()
		return
	default:
	}
	close(l.done)
	for c := range l.conns {
		_ = c.Close()
	}
	l.mu.Unlock()
	_ = l.ln.Close()
	l.wg.Wait()
}

// delayNet routes what every agent dials to every server's RPC port
// through a delayLink of its own, so that one server's traffic can be
// delayed while the others' is not. An nftables DNAT rule per (agent,
// server) pair, matched by the agent's cgroup, sends the agent's
// connections to the server's RPC address to the link's listener; the
// links themselves run in the test process, outside the agents'
// cgroups, so their own connections to the servers are not rerouted.
// The links are there from the start, delaying nothing, so the pooled
// connections already open when a delay fault starts are delayed too.
type delayNet struct {
	n     *netFaults
	links []*delayLink
}

// natChain is the DNAT chain of the netFaults table.
const natChain = "delay_nat"

func newDelayNet(n *netFaults) (*delayNet, error) {
	script := fmt.Sprintf("add chain ip %s %s { type nat hook output priority -100; policy accept; }\n", n.table, natChain)
	if out, err := runNft(script); err != nil {
		return nil, fmt.Errorf("create the nft nat chain (delays need nftables NAT): %v: %s", err, out)
	}
	return &delayNet{n: n}, nil
}

// route sends what agent from dials to server to's RPC address, rpc,
// through a new link. The agent's cgroup must exist.
func (d *delayNet) route(from, to, rpc string) error {
	host, port, err := net.SplitHostPort(rpc)
	if err != nil {
		return err
	}
	l, err := newDelayLink(from, to, rpc)
	if err != nil {
		return err
	}
	rule := fmt.Sprintf("add rule ip %s %s socket cgroupv2 level %d %q ip daddr %s tcp dport %s dnat to %s\n",
		d.n.table, natChain, d.n.level+1, d.n.nftDir+"/"+from, host, port, l.addr())
	if out, err := runNft(rule); err != nil {
		l.close()
		return fmt.Errorf("route %s→%s through a delay link: %v: %s", from, to, err, out)
	}
	d.links = append(d.links, l)
	return nil
}

// delay holds what server sends for send and what it receives for
// recv (nil: no delay), on every link it is an end of.
func (d *delayNet) delay(server string, send, recv *delaySpec) {
	for _, l := range d.links {
		switch server {
		case l.from:
			l.up.Store(send)
			l.down.Store(recv)
		case l.to:
			l.up.Store(recv)
			l.down.Store(send)
		}
	}
}

// delayStats is what the links of a delayNet have relayed and held.
type delayStats struct {
	conns, held int64
	waited      time.Duration
}

func (d *delayNet) stats() delayStats {
	var st delayStats
	for _, l := range d.links {
		st.conns += l.accepted.Load()
		st.held += l.heldChunks.Load()
		st.waited += time.Duration(l.heldNanos.Load())
	}
	return st
}

// since describes what was held since before was taken.
func (st delayStats) since(before delayStats) string {
	held := st.held - before.held
	if held == 0 {
		return "no chunk held"
	}
	return fmt.Sprintf("%d chunks held, %s each on average", held, ((st.waited - before.waited) / time.Duration(held)).Round(time.Millisecond))
}

// clear removes every delay.
func (d *delayNet) clear() {
	for _, l := range d.links {
		l.up.Store(nil)
		l.down.Store(nil)
	}
}

// close stops every link (the nft table goes with netFaults).
func (d *delayNet) close() {
	for _, l := range d.links {
		l.close()
	}
}

// freePort picks a TCP port free on ip now, for an agent that must be
// started on a port known in advance.
func freePort(ip string) (string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return "", err
	}
	defer func() { _ = ln.Close() }()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}
