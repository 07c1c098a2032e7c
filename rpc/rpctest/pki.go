// Package rpctest provides test helpers for code that speaks Stratus RPC
// over TLS: a throw-away certificate authority that issues server and
// client certificates as PEM files. It must not be imported outside
// tests.
package rpctest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a throw-away CA plus the certificates it signed, written as PEM
// files in a test's temp dir.
type PKI struct {
	dir    string
	CAFile string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	serial int64
}

// NewPKI creates a CA valid for an hour around now.
func NewPKI(t testing.TB) *PKI {
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
	pki := &PKI{dir: dir, ca: ca, caKey: key, serial: 1}
	pki.CAFile = writePEM(t, dir, "ca.pem", "CERTIFICATE", der)
	return pki
}

// Issue signs a certificate for the given DNS name and 127.0.0.1, usable by
// both servers and clients, and returns its cert and key file paths.
func (p *PKI) Issue(t testing.TB, name string) (certFile, keyFile string) {
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

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generate key: %v", err)
	}
	return key
}

func writePEM(t testing.TB, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	return path
}
