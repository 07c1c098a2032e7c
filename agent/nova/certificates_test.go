package nova

import (
	"crypto/x509"
	"testing"

	"github.com/stratus-cloud/stratus/tlsutil"
)

// TestCertificatesAgainstARealServer drives os-certificates against a
// real server, whose leader creates the cluster CA on first use; the
// bodies have the shape of Nova's API samples at every microversion.
func TestCertificatesAgainstARealServer(t *testing.T) {
	h, _ := newRealHarness(t)
	wantRoot := sample(t, "os-certificates/certificate-get-root-resp.json")
	wantCreate := sample(t, "os-certificates/certificate-create-resp.json")

	var rootPEM string
	for _, mv := range []string{"", "2.1", "2.53", "2.96"} {
		r := h.req("GET", "/compute/v2.1/os-certificates/root", memberTok, mv, nil).expect(t, 200)
		sameKeys(t, "root "+mv, r.body, wantRoot)
		got := r.obj("certificate")
		sameKeys(t, "root certificate "+mv, got, wantRoot["certificate"].(map[string]any))
		if got["private_key"] != nil {
			t.Fatalf("root private_key = %v, want null", got["private_key"])
		}
		if rootPEM == "" {
			rootPEM = got["data"].(string)
		} else if got["data"] != rootPEM {
			t.Fatalf("the root changed at %s", mv)
		}
	}
	root, err := tlsutil.ParseCertificate([]byte(rootPEM))
	if err != nil || !root.IsCA {
		t.Fatalf("root: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(root)

	r := h.req("POST", "/compute/v2.1/os-certificates", otherTok, "2.1", nil).expect(t, 200)
	sameKeys(t, "create", r.body, wantCreate)
	got := r.obj("certificate")
	sameKeys(t, "created certificate", got, wantCreate["certificate"].(map[string]any))
	cert, err := tlsutil.ParseCertificate([]byte(got["data"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "u-bob" || len(cert.Subject.OrganizationalUnit) != 1 || cert.Subject.OrganizationalUnit[0] != "p-other" {
		t.Errorf("subject = %v, want the caller's user and project", cert.Subject)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("the user certificate does not chain to the root: %v", err)
	}
	if _, err := tlsutil.ParseKey([]byte(got["private_key"].(string))); err != nil {
		t.Fatalf("private_key: %v", err)
	}

	h.req("GET", "/compute/v2.1/os-certificates/123", memberTok, "", nil).
		fault(t, 501, "notImplemented", "Only root certificate can be retrieved.")
	h.req("DELETE", "/compute/v2.1/os-certificates/root", memberTok, "", nil).expect(t, 405)
	h.req("GET", "/compute/v2.1/os-certificates/root", "", "", nil).expect(t, 401)
}
