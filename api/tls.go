package api

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strconv"
)

// Environment variables DefaultConfig reads for an agent that serves
// HTTPS (tls { http = true }).
const (
	// EnvCACert names a PEM file of the CA that signed the agent's
	// certificate.
	EnvCACert = "CLOUDCTL_CACERT"
	// EnvClientCert and EnvClientKey name the client certificate and key
	// an agent with verify_https_client requires.
	EnvClientCert = "CLOUDCTL_CLIENT_CERT"
	EnvClientKey  = "CLOUDCTL_CLIENT_KEY"
	// EnvTLSServerName overrides the name the agent's certificate must
	// carry.
	EnvTLSServerName = "CLOUDCTL_TLS_SERVER_NAME"
	// EnvSkipVerify, when true, accepts any certificate (testing only).
	EnvSkipVerify = "CLOUDCTL_SKIP_VERIFY"
)

// TLSConfig is how a Client checks an HTTPS agent and proves itself.
type TLSConfig struct {
	// CACert is a PEM file of the CA to trust instead of the system's.
	CACert string
	// ClientCert and ClientKey are PEM files of a client certificate.
	ClientCert, ClientKey string
	// ServerName is the name the agent's certificate must carry, when
	// it differs from the address's host.
	ServerName string
	// Insecure skips the agent's certificate check.
	Insecure bool
}

// tlsFromEnv reads the TLS settings from the environment; nil if none.
func tlsFromEnv() *TLSConfig {
	t := &TLSConfig{CACert: os.Getenv(EnvCACert), ClientCert: os.Getenv(EnvClientCert), ClientKey: os.Getenv(EnvClientKey),
		ServerName: os.Getenv(EnvTLSServerName)}
	t.Insecure, _ = strconv.ParseBool(os.Getenv(EnvSkipVerify))
	if *t == (TLSConfig{}) {
		return nil
	}
	return t
}

// tlsClientConfig builds the crypto/tls configuration of t.
func (t *TLSConfig) tlsClientConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName, InsecureSkipVerify: t.Insecure} //nolint:gosec // only when asked for
	if t.CACert != "" {
		pem, err := os.ReadFile(t.CACert)
		if err != nil {
			return nil, fmt.Errorf("CA certificate: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA certificate %s holds no PEM certificate", t.CACert)
		}
	}
	if (t.ClientCert == "") != (t.ClientKey == "") {
		return nil, fmt.Errorf("a client certificate needs both its certificate and its key")
	}
	if t.ClientCert != "" {
		cert, err := tls.LoadX509KeyPair(t.ClientCert, t.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// httpClientFor returns an HTTP client using t.
func httpClientFor(t *TLSConfig) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if t != nil {
		cfg, err := t.tlsClientConfig()
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = cfg
	}
	return &http.Client{Transport: tr}, nil
}
