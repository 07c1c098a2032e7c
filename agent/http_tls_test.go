package agent

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/api"
	"github.com/stratus-cloud/stratus/tlsutil"
)

// testPKI is a CA with files for an agent's certificate and a client's.
type testPKI struct {
	ca                   *tlsutil.CA
	dir, caFile          string
	certFile, keyFile    string
	clientCert, clientKy string
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	caPEM, caKey, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := tlsutil.ParseCA(caPEM, caKey)
	if err != nil {
		t.Fatal(err)
	}
	p := &testPKI{ca: ca, dir: dir, caFile: filepath.Join(dir, "ca.pem")}
	writeFile(t, p.caFile, string(caPEM))
	p.certFile, p.keyFile = p.issue(t, tlsutil.RoleServer, "agent")
	p.clientCert, p.clientKy = p.issue(t, tlsutil.RoleCLI, "cli")
	return p
}

func (p *testPKI) issue(t *testing.T, role tlsutil.Role, name string) (certFile, keyFile string) {
	t.Helper()
	cert, key, err := p.ca.IssueRole(tlsutil.CertOptions{Role: role, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}})
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(p.dir, name+".pem"), filepath.Join(p.dir, name+"-key.pem")
	writeFile(t, certFile, string(cert))
	writeFile(t, keyFile, string(key))
	return certFile, keyFile
}

func httpsAgent(t *testing.T, p *testPKI, verifyClients bool) *Agent {
	t.Helper()
	return startDevAgent(t, func(c *Config) {
		c.TLS = &TLSConfig{HTTP: true, CAFile: p.caFile, CertFile: p.certFile, KeyFile: p.keyFile, VerifyHTTPSClient: verifyClients}
	})
}

func statusLeader(t *testing.T, a *Agent, tlsCfg *api.TLSConfig) error {
	t.Helper()
	c, err := api.NewClient(&api.Config{Address: a.HTTPURL(), TLS: tlsCfg})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Status().Leader()
	return err
}

// TestHTTPSListener: with tls { http = true } the API port speaks TLS
// 1.2+ with the agent's certificate: a client trusting the CA gets in,
// one that does not is refused by its own certificate check, and plain
// HTTP gets nothing.
func TestHTTPSListener(t *testing.T) {
	t.Parallel()
	p := newTestPKI(t)
	a := httpsAgent(t, p, false)
	if !strings.HasPrefix(a.HTTPURL(), "https://") {
		t.Fatalf("HTTPURL %s", a.HTTPURL())
	}
	waitFor(t, "the leader over HTTPS", func() error { return statusLeader(t, a, &api.TLSConfig{CACert: p.caFile}) })
	var unknown x509.UnknownAuthorityError
	if err := statusLeader(t, a, nil); !errors.As(err, &unknown) {
		t.Errorf("a client without the CA: %v, want an unknown authority", err)
	}
	resp, err := http.Get("http://" + a.HTTPAddr() + "/v1/status/leader")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP was served on an HTTPS port")
		}
	}
	conf := &tls.Config{MaxVersion: tls.VersionTLS11, InsecureSkipVerify: true} //nolint:gosec // the handshake must fail
	if c, err := tls.Dial("tcp", a.HTTPAddr(), conf); err == nil {
		c.Close()
		t.Error("a TLS 1.1 handshake succeeded")
	}
}

// TestHTTPSClientCertificates: with verify_https_client the listener
// wants a certificate the CA signed; and a SIGHUP-style reload serves a
// new certificate to the next handshake.
func TestHTTPSClientCertificates(t *testing.T) {
	t.Parallel()
	p := newTestPKI(t)
	a := httpsAgent(t, p, true)
	withCert := &api.TLSConfig{CACert: p.caFile, ClientCert: p.clientCert, ClientKey: p.clientKy}
	waitFor(t, "the leader with a client certificate", func() error { return statusLeader(t, a, withCert) })
	if err := statusLeader(t, a, &api.TLSConfig{CACert: p.caFile}); err == nil {
		t.Error("a client without a certificate got in")
	}
	serial := func() string {
		c, err := tls.Dial("tcp", a.HTTPAddr(), &tls.Config{RootCAs: caPool(t, p.caFile), ServerName: "127.0.0.1",
			Certificates: []tls.Certificate{loadPair(t, p.clientCert, p.clientKy)}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	before := serial()
	p.issue(t, tlsutil.RoleServer, "agent") // new files in place
	if err := a.reloadHTTPS(); err != nil {
		t.Fatal(err)
	}
	if after := serial(); after == before {
		t.Errorf("the reloaded certificate is not served (serial %s)", after)
	}
	if err := statusLeader(t, a, withCert); err != nil {
		t.Errorf("after the reload: %v", err)
	}
}

func caPool(t *testing.T, file string) *x509.CertPool {
	pem, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return pool
}

func loadPair(t *testing.T, cert, key string) tls.Certificate {
	c, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHTTPSConfigChecks: the settings that cannot work are refused.
func TestHTTPSConfigChecks(t *testing.T) {
	for _, tc := range []struct {
		tls  TLSConfig
		want string
	}{
		{TLSConfig{HTTP: true, KeyFile: "k"}, "cert_file and key_file"},
		{TLSConfig{HTTP: true, CertFile: "c", KeyFile: "k", VerifyHTTPSClient: true}, "verify_https_client needs"},
		{TLSConfig{CAFile: "ca", VerifyHTTPSClient: true}, "verify_https_client needs"},
	} {
		tlsCfg := tc.tls
		cfg := &Config{NodeName: "n", DataDir: t.TempDir(), BindAddr: "127.0.0.1", DevMode: true, TLS: &tlsCfg}
		if err := cfg.Finalize(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.tls, err, tc.want)
		}
	}
}

// TestDevTLS: a dev cloud with DevTLS makes its CA and certificate in
// its data dir, serves HTTPS with them, and keeps them across restarts
// of the same data dir.
func TestDevTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := startDevAgent(t, func(c *Config) { c.DevTLS, c.DataDir = true, dir })
	ca := a.HTTPSCACert()
	if ca != filepath.Join(dir, "dev-tls", "ca.pem") || !strings.HasPrefix(a.HTTPURL(), "https://") {
		t.Fatalf("dev TLS: CA %q, URL %s", ca, a.HTTPURL())
	}
	waitFor(t, "the dev cloud over HTTPS", func() error { return statusLeader(t, a, &api.TLSConfig{CACert: ca}) })
	before, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{DevMode: true, DevTLS: true, DataDir: dir, NodeName: "again"}
	if err := cfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(cfg.TLS.CAFile); string(after) != string(before) {
		t.Error("a second start made a new CA")
	}
	if err := (&Config{DevTLS: true, DataDir: t.TempDir(), Server: &ServerConfig{Enabled: true}}).Finalize(); err == nil ||
		!strings.Contains(err.Error(), "needs -dev") {
		t.Errorf("DevTLS without dev mode: %v", err)
	}
}
