package rpc

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// TLSConfig describes the TLS material of an agent, as file paths so it can
// come straight from configuration. The same certificate serves both sides:
// servers dial each other (Raft, forwarding) as clients.
type TLSConfig struct {
	// CAFile is the PEM bundle of CAs that sign server (and, with
	// VerifyIncoming, client) certificates.
	CAFile string
	// CertFile and KeyFile are this agent's PEM certificate and key.
	CertFile string
	KeyFile  string
	// VerifyIncoming makes servers require and verify client certificates.
	VerifyIncoming bool
	// VerifyServerHostname makes clients check the server certificate's
	// name against ServerName (or, when empty, the dialed host). Without
	// it clients still verify the chain against CAFile, but accept any
	// name: servers are usually dialed by IP, and a shared cluster CA is
	// what proves membership.
	VerifyServerHostname bool
	// ServerName is the name expected in server certificates, such as
	// server.global.stratus (tlsutil.RoleName). With VerifyServerHostname
	// a server also requires it in the client certificate of incoming
	// Raft connections (see RaftPeerName), so a client certificate of the
	// same CA cannot act as a server in either direction.
	ServerName string
}

// RaftPeerName is the name a server must require in the certificates of
// incoming Raft connections (ServerConfig.RaftPeerName): ServerName when
// VerifyServerHostname is set, else "" (any peer the TLS config admits).
func (c *TLSConfig) RaftPeerName() string {
	if !c.Enabled() || !c.VerifyServerHostname {
		return ""
	}
	return c.ServerName
}

// Enabled reports whether any TLS material is configured.
func (c *TLSConfig) Enabled() bool {
	return c != nil && (c.CAFile != "" || c.CertFile != "" || c.KeyFile != "")
}

// ServerConfig builds the tls.Config for accepting connections. It returns
// nil, nil when TLS is not enabled.
func (c *TLSConfig) ServerConfig() (*tls.Config, error) {
	if !c.Enabled() {
		return nil, nil
	}
	if c.CertFile == "" || c.KeyFile == "" {
		return nil, errors.New("rpc tls: serving TLS needs both a cert file and a key file")
	}
	cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("rpc tls: load key pair: %w", err)
	}
	cfg := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.NoClientCert,
	}
	if c.VerifyIncoming {
		if c.CAFile == "" {
			return nil, errors.New("rpc tls: verifying incoming connections needs a CA file")
		}
		pool, err := loadCAPool(c.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	} else if c.VerifyServerHostname && c.CAFile != "" {
		// Raft needs the peer's server certificate (RaftPeerName) even
		// when RPC callers may come without one: verify it if given.
		pool, err := loadCAPool(c.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return cfg, nil
}

// ClientConfig builds the tls.Config for dialing servers. It returns nil,
// nil when TLS is not enabled. A CA file is required: a client that does not
// verify the server would hand requests and tokens to anyone.
func (c *TLSConfig) ClientConfig() (*tls.Config, error) {
	if !c.Enabled() {
		return nil, nil
	}
	if c.CAFile == "" {
		return nil, errors.New("rpc tls: dialing with TLS needs a CA file to verify servers")
	}
	pool, err := loadCAPool(c.CAFile)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		RootCAs:    pool,
	}
	if c.CertFile != "" || c.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("rpc tls: load key pair: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if c.VerifyServerHostname {
		cfg.ServerName = c.ServerName
	} else {
		// Go's verifier always checks the name, so switch it off and
		// verify the chain ourselves.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = verifyChainOnly(pool)
	}
	return cfg, nil
}

func loadCAPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rpc tls: read CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("rpc tls: no PEM certificates in CA file %s", path)
	}
	return pool, nil
}

// verifyChainOnly checks the peer's chain against roots, ignoring its name.
func verifyChainOnly(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("rpc tls: server presented no certificate")
		}
		intermediates := x509.NewCertPool()
		for _, cert := range cs.PeerCertificates[1:] {
			intermediates.AddCert(cert)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
			Roots:         roots,
			Intermediates: intermediates,
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		})
		return err
	}
}

// clientTLSFor returns cfg ready to dial addr: if cfg checks hostnames but
// names none, the dialed host is the name to check.
func clientTLSFor(cfg *tls.Config, addr string) *tls.Config {
	if cfg.ServerName != "" || cfg.InsecureSkipVerify {
		return cfg
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	cfg = cfg.Clone()
	cfg.ServerName = host
	return cfg
}

// dialConn connects to addr and performs the client side of the first-byte
// protocol: TypeTLS and a handshake when tlsCfg is set, then typ. The whole
// exchange is bounded by timeout (zero means no bound).
func dialConn(addr string, typ byte, tlsCfg *tls.Config, timeout time.Duration) (net.Conn, error) {
	dialer := net.Dialer{Timeout: timeout}
	conn, err := dialer.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if timeout > 0 {
		if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
			conn.Close()
			return nil, err
		}
	}
	if tlsCfg != nil {
		if _, err := conn.Write([]byte{TypeTLS}); err != nil {
			conn.Close()
			return nil, err
		}
		tlsConn := tls.Client(conn, clientTLSFor(tlsCfg, addr))
		if err := tlsConn.Handshake(); err != nil {
			conn.Close()
			return nil, fmt.Errorf("tls handshake: %w", err)
		}
		conn = tlsConn
	}
	if _, err := conn.Write([]byte{typ}); err != nil {
		conn.Close()
		return nil, err
	}
	if timeout > 0 {
		if err := conn.SetDeadline(time.Time{}); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}
