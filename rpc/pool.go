package rpc

import (
	"crypto/tls"
	"fmt"
	"net/rpc"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	msgpackrpc "github.com/hashicorp/net-rpc-msgpackrpc/v2"
	"github.com/hashicorp/yamux"
)

const (
	defaultMaxIdle     = 2 * time.Minute
	defaultDialTimeout = 10 * time.Second

	// maxIdleStreams bounds the streams kept open per session for reuse.
	// Opening a stream is cheap, but reusing one saves a round trip and a
	// server goroutine start per call.
	maxIdleStreams = 32

	// maxReapInterval bounds how long an idle session can outlive MaxIdle.
	maxReapInterval = 30 * time.Second
)

// PoolConfig configures a ConnPool.
type PoolConfig struct {
	// TLS is the client TLS configuration; nil dials plaintext.
	TLS *tls.Config
	// MaxIdle is how long a session with no calls stays open (default 2m).
	MaxIdle time.Duration
	// DialTimeout bounds the TCP dial plus the TLS and type-byte
	// handshake (default 10s).
	DialTimeout time.Duration
	// Logger receives debug logs; nil discards them.
	Logger hclog.Logger
}

// ConnPool makes msgpack-RPC calls to servers, keeping one yamux session per
// address and a stream per in-flight call. It is safe for concurrent use.
type ConnPool struct {
	tlsConfig   *tls.Config
	maxIdle     time.Duration
	dialTimeout time.Duration
	logger      hclog.Logger
	yamuxConfig *yamux.Config

	mu         sync.Mutex
	conns      map[string]*poolConn
	dialing    map[string]*dialCall
	shutdown   bool
	shutdownCh chan struct{}
	reaperDone chan struct{}
}

// poolConn is one yamux session to one address.
type poolConn struct {
	addr    string
	session *yamux.Session

	// refs and lastUsed are guarded by ConnPool.mu; the reaper only closes
	// sessions with no call in flight.
	refs     int
	lastUsed time.Time

	mu     sync.Mutex
	idle   []*streamClient
	closed bool
}

// streamClient is one yamux stream with its codec. It carries one call at a
// time; between calls it waits in poolConn.idle.
type streamClient struct {
	stream *yamux.Stream
	codec  *msgpackrpc.MsgpackCodec
	seq    uint64
}

// dialCall lets concurrent callers for one address share a single dial,
// and its failure.
type dialCall struct {
	done chan struct{}
	err  error
}

// NewConnPool returns a pool and starts its idle-session reaper; call
// Shutdown to stop it.
func NewConnPool(cfg PoolConfig) *ConnPool {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	p := &ConnPool{
		tlsConfig:   cfg.TLS,
		maxIdle:     cfg.MaxIdle,
		dialTimeout: cfg.DialTimeout,
		logger:      logger,
		yamuxConfig: newYamuxConfig(logger),
		conns:       make(map[string]*poolConn),
		dialing:     make(map[string]*dialCall),
		shutdownCh:  make(chan struct{}),
		reaperDone:  make(chan struct{}),
	}
	if p.maxIdle <= 0 {
		p.maxIdle = defaultMaxIdle
	}
	if p.dialTimeout <= 0 {
		p.dialTimeout = defaultDialTimeout
	}
	go p.reap()
	return p
}

// RPC calls method ("Endpoint.Method") on the server at addr, encoding args
// and decoding the result into reply. An error returned by the endpoint
// comes back as an rpc.ServerError with the endpoint's text unchanged; a
// transport failure comes back as a *ConnError (see IsConnError) and drops
// the session, so the next call to addr dials afresh. RPC never retries:
// the call might already have run.
func (p *ConnPool) RPC(addr, method string, args, reply any) error {
	c, err := p.acquire(addr)
	if err != nil {
		return err
	}
	defer p.release(c)

	sc, err := c.getClient()
	if err != nil {
		p.drop(c, err)
		return &ConnError{Addr: addr, Op: "open stream", Err: err}
	}
	return p.call(c, sc, method, args, reply)
}

// call runs one request/response exchange on sc, then returns sc to c for
// reuse or discards it, depending on whether the stream is still in step.
func (p *ConnPool) call(c *poolConn, sc *streamClient, method string, args, reply any) error {
	sc.seq++
	req := rpc.Request{ServiceMethod: method, Seq: sc.seq}
	if err := sc.codec.WriteRequest(&req, args); err != nil {
		return p.fail(c, sc, "write request", err, false)
	}
	var resp rpc.Response
	if err := sc.codec.ReadResponseHeader(&resp); err != nil {
		// Whatever broke, the response stream can no longer be trusted.
		return p.fail(c, sc, "read response", err, true)
	}
	if resp.Error != "" {
		// Drain the (empty) body so the stream stays usable; the
		// endpoint's outcome is known either way.
		if err := sc.codec.ReadResponseBody(nil); err != nil {
			p.fail(c, sc, "read response", err, false)
		} else {
			c.putClient(sc)
		}
		return rpc.ServerError(resp.Error)
	}
	if err := sc.codec.ReadResponseBody(reply); err != nil {
		return p.fail(c, sc, "read reply", err, false)
	}
	c.putClient(sc)
	return nil
}

// fail discards sc after a failed exchange. A transport failure (or any
// failure when connErr is set) also drops the session and is reported as a
// *ConnError; anything else, such as a reply that does not decode into the
// caller's type, only costs the stream, whose codec is now out of step.
func (p *ConnPool) fail(c *poolConn, sc *streamClient, op string, err error, connErr bool) error {
	sc.close()
	if connErr || IsConnError(err) {
		p.drop(c, err)
		return &ConnError{Addr: c.addr, Op: op, Err: err}
	}
	return fmt.Errorf("rpc: %s %s: %w", op, c.addr, err)
}

// acquire returns the session for addr, dialing one if needed, and counts
// the caller as a user of it until release.
func (p *ConnPool) acquire(addr string) (*poolConn, error) {
	for {
		p.mu.Lock()
		if p.shutdown {
			p.mu.Unlock()
			return nil, ErrPoolShutdown
		}
		if c, ok := p.conns[addr]; ok {
			if !c.session.IsClosed() {
				c.refs++
				p.mu.Unlock()
				return c, nil
			}
			// The server went away since the last call; yamux noticed
			// before we had to find out the hard way.
			delete(p.conns, addr)
		}
		if dc, ok := p.dialing[addr]; ok {
			p.mu.Unlock()
			select {
			case <-dc.done:
			case <-p.shutdownCh:
				return nil, ErrPoolShutdown
			}
			if dc.err != nil {
				return nil, dc.err
			}
			continue
		}
		dc := &dialCall{done: make(chan struct{})}
		p.dialing[addr] = dc
		p.mu.Unlock()

		c, err := p.dial(addr)

		p.mu.Lock()
		delete(p.dialing, addr)
		dc.err = err
		close(dc.done)
		if err != nil {
			p.mu.Unlock()
			return nil, err
		}
		if p.shutdown {
			p.mu.Unlock()
			c.close()
			return nil, ErrPoolShutdown
		}
		c.refs = 1
		c.lastUsed = time.Now()
		p.conns[addr] = c
		p.mu.Unlock()
		return c, nil
	}
}

func (p *ConnPool) dial(addr string) (*poolConn, error) {
	conn, err := dialConn(addr, TypeMultiplex, p.tlsConfig, p.dialTimeout)
	if err != nil {
		p.logger.Debug("dial failed", "addr", addr, "error", err)
		return nil, &ConnError{Addr: addr, Op: "dial", Err: err}
	}
	session, err := yamux.Client(newFrameConn(conn), p.yamuxConfig)
	if err != nil {
		conn.Close()
		return nil, &ConnError{Addr: addr, Op: "start session", Err: err}
	}
	p.logger.Debug("session opened", "addr", addr)
	return &poolConn{addr: addr, session: session}, nil
}

func (p *ConnPool) release(c *poolConn) {
	p.mu.Lock()
	c.refs--
	c.lastUsed = time.Now()
	p.mu.Unlock()
}

// drop removes c from the pool and closes its session. Other calls in
// flight on it fail with connection errors, as they would soon anyway.
func (p *ConnPool) drop(c *poolConn, reason error) {
	p.mu.Lock()
	if p.conns[c.addr] == c {
		delete(p.conns, c.addr)
	}
	p.mu.Unlock()
	p.logger.Debug("dropping session", "addr", c.addr, "reason", reason)
	c.close()
}

// reap closes sessions that have been idle longer than maxIdle.
func (p *ConnPool) reap() {
	defer close(p.reaperDone)
	interval := min(max(p.maxIdle/2, time.Millisecond), maxReapInterval)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-p.shutdownCh:
			return
		case <-ticker.C:
		}
		var idle []*poolConn
		now := time.Now()
		p.mu.Lock()
		for addr, c := range p.conns {
			if c.refs == 0 && (now.Sub(c.lastUsed) >= p.maxIdle || c.session.IsClosed()) {
				delete(p.conns, addr)
				idle = append(idle, c)
			}
		}
		p.mu.Unlock()
		for _, c := range idle {
			p.logger.Debug("closing idle session", "addr", c.addr)
			c.close()
		}
	}
}

// Shutdown closes every session, failing calls in flight, and stops the
// reaper. Later calls return ErrPoolShutdown. Shutdown is idempotent.
func (p *ConnPool) Shutdown() error {
	p.mu.Lock()
	if p.shutdown {
		p.mu.Unlock()
		return nil
	}
	p.shutdown = true
	close(p.shutdownCh)
	conns := make([]*poolConn, 0, len(p.conns))
	for _, c := range p.conns {
		conns = append(conns, c)
	}
	clear(p.conns)
	p.mu.Unlock()

	for _, c := range conns {
		c.close()
	}
	<-p.reaperDone
	return nil
}

// getClient takes an idle stream or opens a new one.
func (c *poolConn) getClient() (*streamClient, error) {
	c.mu.Lock()
	if n := len(c.idle); n > 0 {
		sc := c.idle[n-1]
		c.idle[n-1] = nil
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return sc, nil
	}
	c.mu.Unlock()

	stream, err := c.session.OpenStream()
	if err != nil {
		return nil, err
	}
	return &streamClient{stream: stream, codec: newCodec(stream)}, nil
}

// putClient keeps sc for the next call, unless enough streams are idle or
// the session is gone.
func (c *poolConn) putClient(sc *streamClient) {
	c.mu.Lock()
	if !c.closed && len(c.idle) < maxIdleStreams && !c.session.IsClosed() {
		c.idle = append(c.idle, sc)
		sc = nil
	}
	c.mu.Unlock()
	if sc != nil {
		sc.close()
	}
}

// close closes the idle streams and the session (which ends every stream).
func (c *poolConn) close() {
	c.mu.Lock()
	c.closed = true
	idle := c.idle
	c.idle = nil
	c.mu.Unlock()
	for _, sc := range idle {
		sc.close()
	}
	c.session.Close()
}

func (sc *streamClient) close() {
	sc.codec.Close()
}
