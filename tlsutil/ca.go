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
	"errors"
	"fmt"
	"math/big"
	"time"
)

// Defaults shared by the CA and the certificates it signs, as in
// `nomad tls` with Stratus's names.
const (
	// DefaultDomain is the domain of role names (server.global.stratus).
	DefaultDomain = "stratus"
	// DefaultRegion is the region of role names when none is given.
	DefaultRegion = "global"
	// DefaultCADays is a new CA's validity: five years.
	DefaultCADays = 1825
	// DefaultCertDays is a role certificate's validity: one year.
	DefaultCertDays = 365
)

// CAOptions configures GenerateCA.
type CAOptions struct {
	// Domain is the cluster's domain; default DefaultDomain.
	Domain string
	// Days is the validity in days; default DefaultCADays.
	Days int
	// CommonName overrides the subject's common name, by default
	// "Stratus Agent CA <serial>".
	CommonName string
	// NameConstraint limits the CA to signing names under Domain (and
	// localhost), plus AdditionalDomains, with a critical X.509 name
	// constraint, so a leaked CA key cannot mint certificates for other
	// sites.
	NameConstraint bool
	// AdditionalDomains are further permitted DNS domains when
	// NameConstraint is set.
	AdditionalDomains []string
	// Now is the time the certificate starts being valid (minus a minute
	// of clock skew); zero means time.Now. Tests set it.
	Now time.Time
}

// GenerateCA creates a self-signed ECDSA P-256 certificate authority and
// returns its certificate and private key in PEM.
func GenerateCA(opts CAOptions) (certPEM, keyPEM []byte, err error) {
	if opts.Domain == "" {
		opts.Domain = DefaultDomain
	}
	if opts.Days == 0 {
		opts.Days = DefaultCADays
	}
	if opts.Days < 0 {
		return nil, nil, fmt.Errorf("tlsutil: CA validity must be a positive number of days, not %d", opts.Days)
	}
	if err := checkDomain(opts.Domain); err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("tlsutil: generate CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	name := opts.CommonName
	if name == "" {
		name = fmt.Sprintf("Stratus Agent CA %s", serial.Text(10)[:12])
	}
	notBefore := startTime(opts.Now)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{
			CommonName:   name,
			Organization: []string{"Stratus"},
		},
		NotBefore:             notBefore,
		NotAfter:              notBefore.Add(time.Duration(opts.Days) * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	if opts.NameConstraint {
		tmpl.PermittedDNSDomainsCritical = true
		tmpl.PermittedDNSDomains = append([]string{opts.Domain, "localhost"}, opts.AdditionalDomains...)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("tlsutil: sign CA certificate: %w", err)
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

// CA is a certificate authority able to sign certificates.
type CA struct {
	// Cert is the CA's certificate.
	Cert *x509.Certificate
	// CertPEM is Cert in PEM, as read.
	CertPEM []byte
	key     crypto.Signer
}

// ParseCA reads a CA certificate and its private key (EC, PKCS#8 or
// PKCS#1 PEM) and checks that they belong together and that the
// certificate may sign others.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	cert, err := ParseCertificate(certPEM)
	if err != nil {
		return nil, fmt.Errorf("tlsutil: CA certificate: %w", err)
	}
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, errors.New("tlsutil: the CA certificate is not allowed to sign certificates")
	}
	key, err := ParseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tlsutil: CA key: %w", err)
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		return nil, errors.New("tlsutil: the CA key does not match the CA certificate")
	}
	return &CA{Cert: cert, CertPEM: certPEM, key: key}, nil
}

// ParseCertificate decodes the first certificate of a PEM bundle.
func ParseCertificate(certPEM []byte) (*x509.Certificate, error) {
	for rest := certPEM; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, errors.New("no PEM certificate found")
		}
		if block.Type == "CERTIFICATE" {
			return x509.ParseCertificate(block.Bytes)
		}
	}
}

// ParseKey decodes a PEM private key: "EC PRIVATE KEY", "RSA PRIVATE
// KEY" or PKCS#8 "PRIVATE KEY".
func ParseKey(keyPEM []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, errors.New("no PEM private key found")
	}
	switch block.Type {
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(block.Bytes)
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		signer, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("unsupported private key type %T", k)
		}
		return signer, nil
	default:
		return nil, fmt.Errorf("unsupported PEM block %q", block.Type)
	}
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	eq, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(b)
}

func encodeKey(key crypto.Signer) ([]byte, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, fmt.Errorf("tlsutil: encode key: %w", err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
	case *rsa.PrivateKey:
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), nil
	default:
		return nil, fmt.Errorf("tlsutil: unsupported key type %T", key)
	}
}

// newSerial returns a random positive 128-bit serial number.
func newSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("tlsutil: serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

// startTime is when a new certificate becomes valid: a minute before now,
// so peers with slightly slow clocks accept it at once.
func startTime(now time.Time) time.Time {
	if now.IsZero() {
		now = time.Now()
	}
	return now.Add(-time.Minute).UTC().Truncate(time.Second)
}
