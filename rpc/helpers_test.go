package rpc

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stratus-cloud/stratus/structs"
)

// EchoArgs and EchoReply are the test endpoint's request and response.
type EchoArgs struct {
	Msg  string
	N    int
	Meta map[string]any
}

type EchoReply struct {
	Msg  string
	N    int
	Meta map[string]any
}

// testEndpoint is registered as "Test" on every test server.
type testEndpoint struct {
	// entered and release let a test hold a Block call in flight.
	entered chan struct{}
	release chan struct{}
}

func newTestEndpoint() *testEndpoint {
	return &testEndpoint{entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (e *testEndpoint) Echo(args *EchoArgs, reply *EchoReply) error {
	reply.Msg = args.Msg
	reply.N = args.N * 2
	reply.Meta = args.Meta
	return nil
}

// Fail returns args.Msg as a plain error.
func (e *testEndpoint) Fail(args *EchoArgs, reply *EchoReply) error {
	return errors.New(args.Msg)
}

// NotFound returns a kinded error.
func (e *testEndpoint) NotFound(args *EchoArgs, reply *EchoReply) error {
	return structs.Errorf(structs.KindNotFound, "flavor %d", args.N)
}

// Block waits until the test releases it.
func (e *testEndpoint) Block(args *EchoArgs, reply *EchoReply) error {
	e.entered <- struct{}{}
	<-e.release
	reply.Msg = "released"
	return nil
}

func testLogger() hclog.Logger {
	// Debug level so every log call is exercised under -race; output only
	// on request because yamux may still log after a test has finished.
	var out io.Writer = io.Discard
	if os.Getenv("STRATUS_RPC_TEST_LOG") != "" {
		out = os.Stderr
	}
	return hclog.New(&hclog.LoggerOptions{Name: "rpc-test", Level: hclog.Debug, Output: out})
}

type testServer struct {
	*Server
	endpoint *testEndpoint
	done     chan struct{} // closed when Serve returns
}

// startServer serves cfg on addr ("" for a fresh port) with the test
// endpoint registered, and shuts it down when the test ends. Each tweak
// adjusts the server before Serve starts.
func startServer(t *testing.T, addr string, cfg ServerConfig, tweaks ...func(*Server)) *testServer {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	cfg.Listener = ln
	if cfg.Logger == nil {
		cfg.Logger = testLogger()
	}
	srv := NewServer(cfg)
	srv.handshakeTimeout = 2 * time.Second
	for _, tweak := range tweaks {
		tweak(srv)
	}
	ep := newTestEndpoint()
	if err := srv.Register("Test", ep); err != nil {
		t.Fatalf("register: %v", err)
	}
	ts := &testServer{Server: srv, endpoint: ep, done: make(chan struct{})}
	go func() {
		defer close(ts.done)
		srv.Serve()
	}()
	t.Cleanup(func() {
		if err := srv.Shutdown(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-ts.done
	})
	return ts
}

func newPool(t *testing.T, cfg PoolConfig) *ConnPool {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger()
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 2 * time.Second
	}
	p := NewConnPool(cfg)
	t.Cleanup(func() { p.Shutdown() })
	return p
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *Server) activeConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.active)
}

func (p *ConnPool) sessions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

func mustServerTLS(t *testing.T, c *TLSConfig) *tls.Config {
	t.Helper()
	cfg, err := c.ServerConfig()
	if err != nil {
		t.Fatalf("server TLS config: %v", err)
	}
	return cfg
}

func mustClientTLS(t *testing.T, c *TLSConfig) *tls.Config {
	t.Helper()
	cfg, err := c.ClientConfig()
	if err != nil {
		t.Fatalf("client TLS config: %v", err)
	}
	return cfg
}
