package command

import (
	"crypto/x509"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent"
	"github.com/stratus-cloud/stratus/api"
	"github.com/stratus-cloud/stratus/tlsutil"
)

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tlsutil.ParseCertificate(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cert
}

func TestTLSCACreateAndCertCreate(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)

	out := runOK(t, "tls", "ca", "create", "-days", "30", "-name-constraint")
	assertContains(t, "ca create", out, "stratus-agent-ca.pem", "stratus-agent-ca-key.pem")
	ca := readCert(t, "stratus-agent-ca.pem")
	if !ca.IsCA || !ca.PermittedDNSDomainsCritical {
		t.Fatalf("CA = IsCA %v constraints %v", ca.IsCA, ca.PermittedDNSDomains)
	}
	if fi, err := os.Stat("stratus-agent-ca-key.pem"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("CA key mode: %v %v", fi, err)
	}
	// The CA is never overwritten.
	if _, errOut, code := run(t, "tls", "ca", "create"); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("second ca create: exit %d, %s", code, errOut)
	}

	roots := x509.NewCertPool()
	roots.AddCert(ca)
	out = runOK(t, "tls", "cert", "create", "-server", "-region", "eu", "-additional-dnsname", "s1.stratus",
		"-additional-ipaddress", "10.1.2.3")
	assertContains(t, "cert create", out, "eu-server-stratus-0.pem", "server.eu.stratus")
	srv := readCert(t, filepath.Join(dir, "eu-server-stratus-0.pem"))
	if err := tlsutil.VerifyRole(srv, roots, tlsutil.RoleServer, "eu", ""); err != nil {
		t.Fatalf("server cert: %v", err)
	}
	if len(srv.IPAddresses) != 2 || !strings.Contains(strings.Join(srv.DNSNames, ","), "s1.stratus") {
		t.Errorf("server cert names %v %v", srv.DNSNames, srv.IPAddresses)
	}
	// A second one gets the next number.
	runOK(t, "tls", "cert", "create", "-server", "-region", "eu")
	if _, err := os.Stat("eu-server-stratus-1-key.pem"); err != nil {
		t.Fatalf("second server cert: %v", err)
	}

	runOK(t, "tls", "cert", "create", "-client")
	cl := readCert(t, "global-client-stratus-0.pem")
	if err := tlsutil.VerifyRole(cl, roots, tlsutil.RoleClient, "global", ""); err != nil {
		t.Fatalf("client cert: %v", err)
	}
	if err := tlsutil.VerifyRole(cl, roots, tlsutil.RoleServer, "global", ""); err == nil {
		t.Fatal("a client certificate verifies as a server")
	}
	// A hypervisor host's own: its name in the subject, still a client.
	out = runOK(t, "tls", "cert", "create", "-client", "-host", "compute-1")
	assertContains(t, "cert create -host", out, "compute-1.client.global.stratus")
	hc := readCert(t, "global-client-stratus-1.pem")
	if hc.Subject.String() != "CN=compute-1.client.global.stratus" {
		t.Errorf("host cert subject %q", hc.Subject)
	}
	if err := tlsutil.VerifyRole(hc, roots, tlsutil.RoleClient, "global", ""); err != nil {
		t.Fatalf("host cert as a client: %v", err)
	}
	runOK(t, "tls", "cert", "create", "-cli")
	cli := readCert(t, "global-cli-stratus-0.pem")
	if len(cli.ExtKeyUsage) != 1 || cli.ExtKeyUsage[0] != x509.ExtKeyUsageClientAuth {
		t.Errorf("cli cert usage %v", cli.ExtKeyUsage)
	}

	for _, args := range [][]string{
		{"tls", "cert", "create"},
		{"tls", "cert", "create", "-server", "-client"},
		{"tls", "cert", "create", "-server", "-additional-ipaddress", "nope"},
		{"tls", "cert", "create", "-server", "-days", "0"},
		{"tls", "cert", "create", "-server", "-host", "compute-1"},
	} {
		if _, _, code := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want a usage error", args, code)
		}
	}
	// The name constraint holds: a name outside the domain is signed
	// but does not verify.
	runOK(t, "tls", "cert", "create", "-server", "-region", "us", "-additional-dnsname", "evil.example.org")
	bad := readCert(t, "us-server-stratus-0.pem")
	if _, err := bad.Verify(x509.VerifyOptions{Roots: roots}); err == nil {
		t.Error("a certificate outside the name constraint verifies")
	}
	// Another domain needs its own CA.
	if _, errOut, code := run(t, "tls", "cert", "create", "-server", "-domain", "other"); code != 1 ||
		!strings.Contains(errOut, "other-agent-ca.pem") {
		t.Errorf("cert for a domain without a CA: exit %d %s", code, errOut)
	}
}

func TestGossipKeygen(t *testing.T) {
	a := strings.TrimSpace(runOK(t, "operator", "gossip", "keygen"))
	b := strings.TrimSpace(runOK(t, "operator", "gossip", "keygen"))
	key, err := base64.StdEncoding.DecodeString(a)
	if err != nil || len(key) != 32 {
		t.Fatalf("keygen printed %q (%v), want base64 of 32 bytes", a, err)
	}
	if a == b {
		t.Fatal("two keys are equal")
	}
}

// TestGossipKeyringAgainstAgent rotates the key of a real agent's pool.
func TestGossipKeyringAgainstAgent(t *testing.T) {
	oldKey := strings.TrimSpace(runOK(t, "operator", "gossip", "keygen"))
	newKey := strings.TrimSpace(runOK(t, "operator", "gossip", "keygen"))
	zero := 0
	dataDir := t.TempDir()
	cfg := &agent.Config{DevMode: true, NodeName: "keyring-test", DataDir: dataDir, BindAddr: "127.0.0.1",
		Encrypt: oldKey, Ports: &agent.PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero}}
	if err := cfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(cfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Error}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	t.Setenv(api.EnvAddress, "http://"+a.HTTPAddr())
	t.Setenv(api.EnvToken, "")

	// The server may still be electing itself; the keyring does not need
	// a leader, but the RPC path does need the server up.
	var out string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		o, _, code := run(t, "operator", "gossip", "keyring", "-list")
		if code == 0 {
			out = o
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("keyring -list never succeeded: %s", o)
		}
	}
	assertContains(t, "list", out, "1 of 1 members answered", oldKey+"  1/1        1/1")

	assertContains(t, "install", runOK(t, "operator", "gossip", "keyring", "-install", newKey), "1 of 1 members done")
	assertContains(t, "use", runOK(t, "operator", "gossip", "keyring", "-use", newKey), "1 of 1 members done")
	assertContains(t, "remove", runOK(t, "operator", "gossip", "keyring", "-remove", oldKey), "1 of 1 members done")
	out = runOK(t, "operator", "gossip", "keyring", "-list", "-json")
	assertContains(t, "list -json", out, `"`+newKey+`": 1`)
	if strings.Contains(out, oldKey) {
		t.Errorf("old key still listed: %s", out)
	}
	// The keyring persists in the data dir.
	data, err := os.ReadFile(filepath.Join(dataDir, "gossip.keyring"))
	if err != nil || !strings.Contains(string(data), newKey) || strings.Contains(string(data), oldKey) {
		t.Errorf("keyring file = %q, %v", data, err)
	}

	_, errOut, code := run(t, "operator", "gossip", "keyring", "-remove", newKey)
	if code != 1 || !strings.Contains(errOut, "primary") {
		t.Errorf("removing the key in use: exit %d %s", code, errOut)
	}
	if _, _, code := run(t, "operator", "gossip", "keyring", "-list", "-use", newKey); code != 2 {
		t.Errorf("two operations: exit %d, want 2", code)
	}
}
