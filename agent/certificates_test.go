package agent

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/tlsutil"
)

// novaCertificate does one os-certificates request with a token and
// returns the status and the "certificate" object.
func novaCertificate(t *testing.T, a *Agent, method, path, token string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, a.url("/compute/v2.1"+path), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s %s: body: %v", method, path, err)
	}
	if c, ok := body["certificate"].(map[string]any); ok {
		return resp.StatusCode, c
	}
	return resp.StatusCode, body
}

func TestOSCertificatesFromClusterCA(t *testing.T) {
	a := testAgent(t, nil)
	demo := keystoneToken(t, a, "demo")

	code, root := novaCertificate(t, a, "GET", "/os-certificates/root", demo)
	if code != 200 || root["private_key"] != nil {
		t.Fatalf("root: %d %v", code, root)
	}
	rootPEM, _ := root["data"].(string)
	rootCert, err := tlsutil.ParseCertificate([]byte(rootPEM))
	if err != nil || !rootCert.IsCA {
		t.Fatalf("root data is not a CA certificate: %v %q", err, rootPEM)
	}

	code, created := novaCertificate(t, a, "POST", "/os-certificates", demo)
	if code != 200 {
		t.Fatalf("create: %d %v", code, created)
	}
	certPEM, _ := created["data"].(string)
	keyPEM, _ := created["private_key"].(string)
	if !strings.HasPrefix(keyPEM, "-----BEGIN RSA PRIVATE KEY-----") {
		t.Fatalf("private_key = %.50q", keyPEM)
	}
	if _, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM)); err != nil {
		t.Fatalf("certificate and key do not match: %v", err)
	}
	cert, err := tlsutil.ParseCertificate([]byte(certPEM))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(rootCert)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("user certificate does not chain to the root: %v", err)
	}

	// The root does not change between requests.
	if _, again := novaCertificate(t, a, "GET", "/os-certificates/root", demo); again["data"] != rootPEM {
		t.Fatal("the root changed")
	}
	// Only the root can be shown: Nova's 501.
	code, fault := novaCertificate(t, a, "GET", "/os-certificates/other", demo)
	nf, _ := fault["notImplemented"].(map[string]any)
	if code != 501 || nf["message"] != "Only root certificate can be retrieved." {
		t.Fatalf("other id: %d %v", code, fault)
	}
	// Without a token: 401.
	if code, _ := novaCertificate(t, a, "GET", "/os-certificates/root", "bogus"); code != 401 {
		t.Fatalf("bogus token: %d", code)
	}
}

// TestOSCertificatesFromConfiguredCA runs an agent with mutual TLS,
// verify_server_hostname and a CA key: os-certificates answers from that
// CA.
func TestOSCertificatesFromConfiguredCA(t *testing.T) {
	dir := t.TempDir()
	caPEM, caKeyPEM, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := tlsutil.ParseCA(caPEM, caKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueRole(tlsutil.CertOptions{Role: tlsutil.RoleServer})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"ca.pem": caPEM, "ca-key.pem": caKeyPEM, "server.pem": certPEM, "server-key.pem": keyPEM}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a := testAgent(t, func(c *Config) {
		c.TLS = &TLSConfig{RPC: true, CAFile: filepath.Join(dir, "ca.pem"), CAKeyFile: filepath.Join(dir, "ca-key.pem"),
			CertFile: filepath.Join(dir, "server.pem"), KeyFile: filepath.Join(dir, "server-key.pem"),
			VerifyIncoming: true, VerifyServerHostname: true}
	})
	demo := keystoneToken(t, a, "demo")
	code, root := novaCertificate(t, a, "GET", "/os-certificates/root", demo)
	if code != 200 || root["data"] != string(caPEM) {
		t.Fatalf("root: %d %v, want the configured CA", code, root)
	}
	if name := a.config.raftPeerName(); name != "server.global.stratus" {
		t.Errorf("raft peer name = %q", name)
	}
}

func TestCAKeyFileNeedsCAFile(t *testing.T) {
	zero := 0
	cfg := &Config{DevMode: true, DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Ports: &PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
		TLS:   &TLSConfig{RPC: true, CAKeyFile: "/nonexistent/key.pem"}}
	if err := cfg.Finalize(); err == nil || !strings.Contains(err.Error(), "ca_key_file needs ca_file") {
		t.Fatalf("Finalize: %v", err)
	}
}
