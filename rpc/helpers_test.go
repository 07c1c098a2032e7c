package rpc

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
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

// testPKI is a CA plus certificates it signed, written as PEM files.
type testPKI struct {
	dir    string
	caFile string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	serial int64
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Stratus Test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("create CA: %v", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("parse CA: %v", err)
	}
	pki := &testPKI{dir: dir, ca: ca, caKey: key, serial: 1}
	pki.caFile = writePEM(t, dir, "ca.pem", "CERTIFICATE", der)
	return pki
}

// issue signs a certificate for the given DNS name and 127.0.0.1, usable by
// both servers and clients, and returns its cert and key file paths.
func (p *testPKI) issue(t *testing.T, name string) (certFile, keyFile string) {
	t.Helper()
	p.serial++
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatalf("create cert: %v", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatalf("marshal key: %v", err)
	}
	certFile = writePEM(t, p.dir, name+".pem", "CERTIFICATE", der)
	keyFile = writePEM(t, p.dir, name+"-key.pem", "EC PRIVATE KEY", keyDER)
	return certFile, keyFile
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generate key: %v", err)
	}
	return key
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	return path
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
