package tlsutil

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"regexp"
	"strings"
	"time"
)

// Role is what a certificate lets its holder act as.
type Role string

// The roles of agent certificates.
const (
	// RoleServer certificates serve RPC and join Raft.
	RoleServer Role = "server"
	// RoleClient certificates belong to client agents: they call servers
	// and may answer other agents, but are not servers.
	RoleClient Role = "client"
	// RoleCLI certificates are for command-line users: client
	// authentication only.
	RoleCLI Role = "cli"
)

// ParseRole reads a role name.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleServer, RoleClient, RoleCLI:
		return r, nil
	}
	return "", fmt.Errorf("tlsutil: unknown certificate role %q (want server, client or cli)", s)
}

// RoleName is the DNS name that identifies role in region:
// server.global.stratus and the like.
func RoleName(role Role, region, domain string) string {
	if region == "" {
		region = DefaultRegion
	}
	if domain == "" {
		domain = DefaultDomain
	}
	return string(role) + "." + region + "." + domain
}

// CertOptions configures CA.IssueRole.
type CertOptions struct {
	// Role is the certificate's role; required.
	Role Role
	// Region and Domain make up the role name; defaults DefaultRegion
	// and DefaultDomain.
	Region, Domain string
	// Days is the validity; default DefaultCertDays.
	Days int
	// DNSNames and IPAddresses are added to the role name, localhost and
	// 127.0.0.1 (cli certificates get only the role name and localhost).
	DNSNames    []string
	IPAddresses []net.IP
	// Now is the start of validity (minus a minute); zero means time.Now.
	Now time.Time
	// Host makes a client certificate a hypervisor host's own: its
	// subject becomes HostClientName (<host>.client.<region>.<domain>),
	// which a storage host admits to the NBD exports of that host's
	// attachments only; the role name stays among its DNS names, so it
	// still serves as a client agent's certificate. Client role only.
	Host string
}

// HostClientName is the name of host's client certificate in region:
// compute-1.client.global.stratus. A storage host admits this subject
// to the NBD exports that host uses.
func HostClientName(host, region, domain string) string {
	return host + "." + RoleName(RoleClient, region, domain)
}

var labelRE = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$`)

// checkDomain accepts a DNS name of one or more labels.
func checkDomain(name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("tlsutil: %q is not a valid DNS domain", name)
	}
	for _, label := range strings.Split(name, ".") {
		if len(label) > 63 || !labelRE.MatchString(label) {
			return fmt.Errorf("tlsutil: %q is not a valid DNS domain", name)
		}
	}
	return nil
}

// IssueRole signs a new ECDSA P-256 key for a role and returns the
// certificate and key in PEM.
func (ca *CA) IssueRole(opts CertOptions) (certPEM, keyPEM []byte, err error) {
	if _, err := ParseRole(string(opts.Role)); err != nil {
		return nil, nil, err
	}
	if opts.Region == "" {
		opts.Region = DefaultRegion
	}
	if opts.Domain == "" {
		opts.Domain = DefaultDomain
	}
	if err := checkDomain(opts.Region); err != nil {
		return nil, nil, fmt.Errorf("tlsutil: region: %w", err)
	}
	if err := checkDomain(opts.Domain); err != nil {
		return nil, nil, err
	}
	if opts.Days == 0 {
		opts.Days = DefaultCertDays
	}
	if opts.Days < 0 {
		return nil, nil, fmt.Errorf("tlsutil: certificate validity must be a positive number of days, not %d", opts.Days)
	}
	name := RoleName(opts.Role, opts.Region, opts.Domain)
	dns := []string{name, "localhost"}
	if opts.Host != "" {
		if opts.Role != RoleClient {
			return nil, nil, fmt.Errorf("tlsutil: only client certificates name a host, not %s certificates", opts.Role)
		}
		if err := checkDomain(opts.Host); err != nil {
			return nil, nil, fmt.Errorf("tlsutil: host: %w", err)
		}
		name = HostClientName(opts.Host, opts.Region, opts.Domain)
		dns = append(dns, name)
	}
	var ips []net.IP
	usage := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	if opts.Role == RoleCLI {
		usage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		ips = append(ips, net.IPv4(127, 0, 0, 1))
	}
	for _, d := range opts.DNSNames {
		if d = strings.TrimSpace(d); d != "" {
			dns = append(dns, d)
		}
	}
	ips = append(ips, opts.IPAddresses...)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("tlsutil: generate key: %w", err)
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		DNSNames:    dns,
		IPAddresses: ips,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: usage,
	}
	return ca.sign(tmpl, key, opts.Now, opts.Days)
}

// UserKeyBits is the size of the RSA keys of user certificates.
const UserKeyBits = 2048

// IssueUser creates an RSA key pair and a client certificate for a user
// of a project, as Nova's os-certificates did: the subject names the
// project and user. It returns the certificate and the PKCS#1 key in PEM.
func (ca *CA) IssueUser(projectID, userID string, days int) (certPEM, keyPEM []byte, err error) {
	if days <= 0 {
		days = DefaultCertDays
	}
	key, err := rsa.GenerateKey(rand.Reader, UserKeyBits)
	if err != nil {
		return nil, nil, fmt.Errorf("tlsutil: generate user key: %w", err)
	}
	tmpl := &x509.Certificate{
		Subject: pkix.Name{
			Organization:       []string{"Stratus"},
			OrganizationalUnit: []string{projectID},
			CommonName:         userID,
		},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	return ca.sign(tmpl, key, time.Time{}, days)
}

// sign completes tmpl (serial, validity) and signs key's certificate.
// Validity never outlasts the CA.
func (ca *CA) sign(tmpl *x509.Certificate, key crypto.Signer, now time.Time, days int) (certPEM, keyPEM []byte, err error) {
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = startTime(now)
	tmpl.NotAfter = tmpl.NotBefore.Add(time.Duration(days) * 24 * time.Hour)
	if tmpl.NotAfter.After(ca.Cert.NotAfter) {
		tmpl.NotAfter = ca.Cert.NotAfter
	}
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("tlsutil: sign certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

// VerifyRole checks that cert chains to roots and carries the name of
// role in region: this is what tells a server certificate from a client
// certificate of the same CA.
func VerifyRole(cert *x509.Certificate, roots *x509.CertPool, role Role, region, domain string) error {
	_, err := cert.Verify(x509.VerifyOptions{
		Roots:     roots,
		DNSName:   RoleName(role, region, domain),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	})
	if err != nil {
		return fmt.Errorf("tlsutil: certificate %q is not a %s certificate of this cluster: %w",
			cert.Subject.CommonName, role, err)
	}
	return nil
}
