package rpc

import (
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stratus-cloud/stratus/rpc/rpctest"
)

// tlsFixture is a TLS-only server that verifies client certificates, plus
// the material clients need.
type tlsFixture struct {
	pki    *rpctest.PKI
	srv    *testServer
	client *TLSConfig // a properly configured client
}

func newTLSFixture(t *testing.T, tweaks ...func(*Server)) *tlsFixture {
	t.Helper()
	pki := rpctest.NewPKI(t)
	certFile, keyFile := pki.Issue(t, "server.stratus")
	serverTLS := &TLSConfig{CAFile: pki.CAFile, CertFile: certFile, KeyFile: keyFile, VerifyIncoming: true}
	srv := startServer(t, "", ServerConfig{TLS: mustServerTLS(t, serverTLS), RequireTLS: true}, tweaks...)

	clientCert, clientKey := pki.Issue(t, "client.stratus")
	return &tlsFixture{
		pki:    pki,
		srv:    srv,
		client: &TLSConfig{CAFile: pki.CAFile, CertFile: clientCert, KeyFile: clientKey},
	}
}

func (f *tlsFixture) call(t *testing.T, cfg *TLSConfig) error {
	t.Helper()
	pool := newPool(t, PoolConfig{TLS: mustClientTLS(t, cfg), DialTimeout: 2 * time.Second})
	var reply EchoReply
	err := pool.RPC(f.srv.Addr().String(), "Test.Echo", &EchoArgs{Msg: "secure"}, &reply)
	if err == nil && reply.Msg != "secure" {
		t.Fatalf("reply = %+v", reply)
	}
	return err
}

func TestTLSRoundTrip(t *testing.T) {
	f := newTLSFixture(t)
	if err := f.call(t, f.client); err != nil {
		t.Fatalf("RPC over TLS: %v", err)
	}
}

func TestTLSVerifyServerHostname(t *testing.T) {
	f := newTLSFixture(t)

	good := *f.client
	good.VerifyServerHostname = true
	good.ServerName = "server.stratus"
	if err := f.call(t, &good); err != nil {
		t.Fatalf("matching server name: %v", err)
	}

	// No name given: the dialed host (127.0.0.1, in the cert's SANs) is
	// checked.
	byHost := *f.client
	byHost.VerifyServerHostname = true
	if err := f.call(t, &byHost); err != nil {
		t.Fatalf("server name from dialed host: %v", err)
	}

	bad := *f.client
	bad.VerifyServerHostname = true
	bad.ServerName = "evil.example"
	if err := f.call(t, &bad); err == nil || !IsConnError(err) {
		t.Fatalf("wrong server name: err = %v, want a connection error", err)
	}
}

func TestTLSRejectsUntrustedServer(t *testing.T) {
	f := newTLSFixture(t)
	other := rpctest.NewPKI(t) // a CA the server's cert does not chain to
	cfg := *f.client
	cfg.CAFile = other.CAFile
	if err := f.call(t, &cfg); err == nil || !IsConnError(err) {
		t.Fatalf("untrusted server: err = %v, want a connection error", err)
	}
}

func TestTLSVerifyIncomingRejectsClientWithoutCert(t *testing.T) {
	f := newTLSFixture(t)
	noCert := &TLSConfig{CAFile: f.pki.CAFile}
	if err := f.call(t, noCert); err == nil || !IsConnError(err) {
		t.Fatalf("client without cert: err = %v, want a connection error", err)
	}
}

func TestRequireTLSRejectsPlaintext(t *testing.T) {
	f := newTLSFixture(t)
	pool := newPool(t, PoolConfig{})
	var reply EchoReply
	err := pool.RPC(f.srv.Addr().String(), "Test.Echo", &EchoArgs{}, &reply)
	if err == nil || !IsConnError(err) {
		t.Fatalf("plaintext RPC to RequireTLS server: err = %v, want a connection error", err)
	}

	// Plaintext Raft is refused too.
	conn, err := f.srv.RaftLayer().Dial(raft.ServerAddress(f.srv.Addr().String()), time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	expectClosedByServer(t, conn)
}

func TestTLSOptionalAcceptsBoth(t *testing.T) {
	pki := rpctest.NewPKI(t)
	certFile, keyFile := pki.Issue(t, "server.stratus")
	serverTLS := &TLSConfig{CAFile: pki.CAFile, CertFile: certFile, KeyFile: keyFile}
	srv := startServer(t, "", ServerConfig{TLS: mustServerTLS(t, serverTLS)})

	var reply EchoReply
	plain := newPool(t, PoolConfig{})
	if err := plain.RPC(srv.Addr().String(), "Test.Echo", &EchoArgs{Msg: "p"}, &reply); err != nil {
		t.Fatalf("plaintext: %v", err)
	}
	// VerifyIncoming is off, so a client without a cert is fine.
	secure := newPool(t, PoolConfig{TLS: mustClientTLS(t, &TLSConfig{CAFile: pki.CAFile})})
	if err := secure.RPC(srv.Addr().String(), "Test.Echo", &EchoArgs{Msg: "s"}, &reply); err != nil {
		t.Fatalf("TLS: %v", err)
	}
}

func TestRaftOverTLS(t *testing.T) {
	f := newTLSFixture(t)
	layer := f.srv.RaftLayer()
	f.srv.SetRaftClientTLS(mustClientTLS(t, f.client))

	accepted := acceptOne(layer)
	conn, err := layer.Dial(raft.ServerAddress(f.srv.Addr().String()), 2*time.Second)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	raftEcho(t, conn, accepted)
}

func TestTLSConfigs(t *testing.T) {
	var nilCfg *TLSConfig
	if nilCfg.Enabled() || (&TLSConfig{}).Enabled() {
		t.Error("empty config reports enabled")
	}
	if cfg, err := (&TLSConfig{}).ServerConfig(); cfg != nil || err != nil {
		t.Errorf("disabled ServerConfig = %v, %v", cfg, err)
	}
	if cfg, err := nilCfg.ClientConfig(); cfg != nil || err != nil {
		t.Errorf("disabled ClientConfig = %v, %v", cfg, err)
	}

	pki := rpctest.NewPKI(t)
	certFile, keyFile := pki.Issue(t, "server.stratus")
	if _, err := (&TLSConfig{CAFile: pki.CAFile}).ServerConfig(); err == nil {
		t.Error("ServerConfig without cert: no error")
	}
	if _, err := (&TLSConfig{CertFile: certFile, KeyFile: keyFile, VerifyIncoming: true}).ServerConfig(); err == nil {
		t.Error("VerifyIncoming without CA: no error")
	}
	if _, err := (&TLSConfig{CertFile: certFile, KeyFile: keyFile}).ClientConfig(); err == nil {
		t.Error("ClientConfig without CA: no error")
	}
	if _, err := (&TLSConfig{CAFile: certFile + ".missing", CertFile: certFile, KeyFile: keyFile}).ClientConfig(); err == nil {
		t.Error("missing CA file: no error")
	}
}

func TestTLSHandshakeTimeout(t *testing.T) {
	f := newTLSFixture(t, func(s *Server) { s.handshakeTimeout = 100 * time.Millisecond })
	// A client that announces TLS and then says nothing is cut off by the
	// handshake timeout rather than held forever.
	conn, err := net.Dial("tcp", f.srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Write([]byte{TypeTLS}); err != nil {
		t.Fatal(err)
	}
	expectClosedByServer(t, conn)
}
