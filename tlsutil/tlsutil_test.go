package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"strings"
	"testing"
)

func newCA(t *testing.T, opts CAOptions) *CA {
	t.Helper()
	certPEM, keyPEM, err := GenerateCA(opts)
	if err != nil {
		t.Fatalf("GenerateCA: %v", err)
	}
	ca, err := ParseCA(certPEM, keyPEM)
	if err != nil {
		t.Fatalf("ParseCA: %v", err)
	}
	return ca
}

func pool(ca *CA) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

func TestGenerateCA(t *testing.T) {
	ca := newCA(t, CAOptions{Days: 10})
	if !ca.Cert.IsCA || ca.Cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Fatalf("CA cert is not a CA: %+v", ca.Cert)
	}
	if !strings.HasPrefix(ca.Cert.Subject.CommonName, "Stratus Agent CA ") {
		t.Errorf("CN = %q", ca.Cert.Subject.CommonName)
	}
	if d := ca.Cert.NotAfter.Sub(ca.Cert.NotBefore).Hours() / 24; d != 10 {
		t.Errorf("validity = %v days, want 10", d)
	}
	if ca.Cert.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("key algorithm = %v, want ECDSA", ca.Cert.PublicKeyAlgorithm)
	}
	if _, _, err := GenerateCA(CAOptions{Domain: "bad domain"}); err == nil {
		t.Error("GenerateCA accepted an invalid domain")
	}
	if _, _, err := GenerateCA(CAOptions{Days: -1}); err == nil {
		t.Error("GenerateCA accepted negative days")
	}
}

func TestParseCARejectsMismatchedKey(t *testing.T) {
	c1, _, _ := GenerateCA(CAOptions{})
	_, k2, _ := GenerateCA(CAOptions{})
	if _, err := ParseCA(c1, k2); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("ParseCA with another CA's key: %v", err)
	}
	if _, err := ParseCA([]byte("junk"), k2); err == nil {
		t.Fatal("ParseCA accepted junk")
	}
}

func TestIssueRoleNamesAndVerification(t *testing.T) {
	ca := newCA(t, CAOptions{})
	for _, tc := range []struct {
		role    Role
		wantDNS []string
		wantIPs int
		usage   []x509.ExtKeyUsage
	}{
		{RoleServer, []string{"server.eu.stratus", "localhost", "s1.example"}, 2, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		{RoleClient, []string{"client.eu.stratus", "localhost", "s1.example"}, 2, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		{RoleCLI, []string{"cli.eu.stratus", "localhost", "s1.example"}, 1, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
	} {
		certPEM, keyPEM, err := ca.IssueRole(CertOptions{Role: tc.role, Region: "eu",
			DNSNames: []string{"s1.example"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.5")}})
		if err != nil {
			t.Fatalf("IssueRole(%s): %v", tc.role, err)
		}
		if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
			t.Fatalf("%s: key pair does not load: %v", tc.role, err)
		}
		cert, err := ParseCertificate(certPEM)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(cert.DNSNames, ",") != strings.Join(tc.wantDNS, ",") || len(cert.IPAddresses) != tc.wantIPs {
			t.Errorf("%s: DNS %v IPs %v", tc.role, cert.DNSNames, cert.IPAddresses)
		}
		if len(cert.ExtKeyUsage) != len(tc.usage) {
			t.Errorf("%s: ext key usage %v, want %v", tc.role, cert.ExtKeyUsage, tc.usage)
		}
		if err := VerifyRole(cert, pool(ca), tc.role, "eu", ""); err != nil {
			t.Errorf("%s: VerifyRole own role: %v", tc.role, err)
		}
		if tc.role != RoleServer {
			if err := VerifyRole(cert, pool(ca), RoleServer, "eu", ""); err == nil {
				t.Errorf("%s certificate passes as a server", tc.role)
			}
		}
		if err := VerifyRole(cert, pool(ca), tc.role, "us", ""); err == nil {
			t.Errorf("%s certificate of region eu passes in region us", tc.role)
		}
	}

	other := newCA(t, CAOptions{})
	certPEM, _, _ := other.IssueRole(CertOptions{Role: RoleServer, Region: "eu"})
	cert, _ := ParseCertificate(certPEM)
	if err := VerifyRole(cert, pool(ca), RoleServer, "eu", ""); err == nil {
		t.Error("a server certificate of another CA verifies")
	}
	if _, _, err := ca.IssueRole(CertOptions{Role: "admin"}); err == nil {
		t.Error("IssueRole accepted an unknown role")
	}
}

func TestNameConstraint(t *testing.T) {
	ca := newCA(t, CAOptions{NameConstraint: true, AdditionalDomains: []string{"corp.example"}})
	if !ca.Cert.PermittedDNSDomainsCritical || len(ca.Cert.PermittedDNSDomains) != 3 {
		t.Fatalf("constraints = %v", ca.Cert.PermittedDNSDomains)
	}
	good, _, err := ca.IssueRole(CertOptions{Role: RoleServer, DNSNames: []string{"s1.corp.example"}})
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := ParseCertificate(good)
	if err := VerifyRole(cert, pool(ca), RoleServer, "", ""); err != nil {
		t.Errorf("permitted names: %v", err)
	}
	bad, _, err := ca.IssueRole(CertOptions{Role: RoleServer, DNSNames: []string{"evil.example.org"}})
	if err != nil {
		t.Fatal(err)
	}
	cert, _ = ParseCertificate(bad)
	if err := VerifyRole(cert, pool(ca), RoleServer, "", ""); err == nil {
		t.Error("a name outside the constraint verifies")
	}
}

func TestIssueUser(t *testing.T) {
	ca := newCA(t, CAOptions{})
	certPEM, keyPEM, err := ca.IssueUser("p-demo", "u-alice", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(keyPEM), "-----BEGIN RSA PRIVATE KEY-----") {
		t.Errorf("key = %.40q", keyPEM)
	}
	cert, _ := ParseCertificate(certPEM)
	if cert.Subject.CommonName != "u-alice" || cert.Subject.OrganizationalUnit[0] != "p-demo" {
		t.Errorf("subject = %v", cert.Subject)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool(ca), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("user cert does not verify: %v", err)
	}
}

// TestIssueHostClient: a hypervisor host's certificate names the host
// in its subject (what a storage host's NBD server admits), keeps the
// client role name (it verifies as a client, never as a server), and
// only client certificates name a host.
func TestIssueHostClient(t *testing.T) {
	ca := newCA(t, CAOptions{NameConstraint: true})
	certPEM, _, err := ca.IssueRole(CertOptions{Role: RoleClient, Region: "eu", Host: "compute-1"})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ParseCertificate(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cert.Subject.String(), "CN="+HostClientName("compute-1", "eu", ""); got != want || want != "CN=compute-1.client.eu.stratus" {
		t.Errorf("subject %q, want %q", got, want)
	}
	if err := VerifyRole(cert, pool(ca), RoleClient, "eu", ""); err != nil {
		t.Errorf("host certificate as a client: %v", err)
	}
	if err := VerifyRole(cert, pool(ca), RoleServer, "eu", ""); err == nil {
		t.Error("a host certificate passes as a server")
	}
	for _, o := range []CertOptions{{Role: RoleServer, Host: "compute-1"}, {Role: RoleCLI, Host: "compute-1"},
		{Role: RoleClient, Host: "bad,name"}, {Role: RoleClient, Host: "-x"}} {
		if _, _, err := ca.IssueRole(o); err == nil {
			t.Errorf("IssueRole(%+v) accepted", o)
		}
	}
}
