package agent

import (
	"fmt"
	"os"

	"github.com/stratus-cloud/stratus/tlsutil"
)

// configuredCA loads the CA of tls { ca_file ca_key_file }, or returns nil
// when no CA key is configured (the cluster then makes its own CA for
// os-certificates).
func (c *Config) configuredCA() (*tlsutil.CA, error) {
	if c.TLS == nil || c.TLS.CAKeyFile == "" {
		return nil, nil
	}
	certPEM, err := os.ReadFile(c.TLS.CAFile)
	if err != nil {
		return nil, fmt.Errorf("tls: read ca_file: %w", err)
	}
	keyPEM, err := os.ReadFile(c.TLS.CAKeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: read ca_key_file: %w", err)
	}
	ca, err := tlsutil.ParseCA(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tls: ca_file and ca_key_file: %w", err)
	}
	return ca, nil
}
