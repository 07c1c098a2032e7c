package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratus-cloud/stratus/tlsutil"
)

// A dev cloud with DevTLS serves HTTPS with a CA and a certificate it
// makes in its data dir (dev-tls/), kept across restarts of the same
// data dir, so that trying TLS needs no `cloudctl tls` steps.

// devTLSFiles makes (or finds) the dev CA and server certificate and
// turns HTTPS on with them.
func (c *Config) devTLSFiles() error {
	dir := filepath.Join(c.DataDir, "dev-tls")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("dev tls: %w", err)
	}
	caFile, caKey := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
	certFile, keyFile := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")
	if _, err := os.Stat(certFile); errors.Is(err, os.ErrNotExist) {
		caPEM, caKeyPEM, err := tlsutil.GenerateCA(tlsutil.CAOptions{CommonName: "Stratus dev CA"})
		if err != nil {
			return fmt.Errorf("dev tls: %w", err)
		}
		ca, err := tlsutil.ParseCA(caPEM, caKeyPEM)
		if err != nil {
			return fmt.Errorf("dev tls: %w", err)
		}
		cert, key, err := ca.IssueRole(tlsutil.CertOptions{Role: tlsutil.RoleServer, Region: c.Region})
		if err != nil {
			return fmt.Errorf("dev tls: %w", err)
		}
		for _, f := range []struct {
			path string
			data []byte
		}{{caFile, caPEM}, {caKey, caKeyPEM}, {keyFile, key}, {certFile, cert}} {
			if err := os.WriteFile(f.path, f.data, 0o600); err != nil {
				return fmt.Errorf("dev tls: %w", err)
			}
		}
	} else if err != nil {
		return fmt.Errorf("dev tls: %w", err)
	}
	if c.TLS == nil {
		c.TLS = &TLSConfig{}
	}
	c.TLS.HTTP, c.TLS.CAFile, c.TLS.CertFile, c.TLS.KeyFile = true, caFile, certFile, keyFile
	return nil
}

// HTTPSCACert is the CA file clients of an HTTPS agent trust, "" when
// the agent serves plain HTTP.
func (a *Agent) HTTPSCACert() string {
	if !a.config.httpsEnabled() {
		return ""
	}
	return a.config.TLS.CAFile
}
