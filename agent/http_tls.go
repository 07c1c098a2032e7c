package agent

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// HTTPS (tls { http = true }): the HTTP port, the S3 listener and the
// console proxy serve TLS 1.2+ with the agent's certificate, which a
// SIGHUP reloads without dropping connections; with verify_https_client
// they require a client certificate signed by the CA. Agents reach one
// another's HTTP ports (disk exports, forwarded console and guest calls)
// over HTTPS too, trusting the CA and presenting their own certificate.

// certReloader holds the agent's HTTPS certificate.
type certReloader struct {
	certFile, keyFile string

	mu   sync.RWMutex
	cert *tls.Certificate
}

func (r *certReloader) load() error {
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("load the HTTPS certificate: %w", err)
	}
	r.mu.Lock()
	r.cert = &cert
	r.mu.Unlock()
	return nil
}

func (r *certReloader) get() *tls.Certificate {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.cert
}

// httpsEnabled reports whether the HTTP listeners serve TLS.
func (c *Config) httpsEnabled() bool { return c.TLS != nil && c.TLS.HTTP }

// httpScheme is the scheme of this agent's HTTP URLs.
func (a *Agent) httpScheme() string {
	if a.config.httpsEnabled() {
		return "https"
	}
	return "http"
}

// setupHTTPS loads the certificate and builds the listeners' and the
// inter-agent client's TLS configurations; nothing when HTTPS is off.
func (a *Agent) setupHTTPS() error {
	c := a.config
	if !c.httpsEnabled() {
		return nil
	}
	r := &certReloader{certFile: c.TLS.CertFile, keyFile: c.TLS.KeyFile}
	if err := r.load(); err != nil {
		return err
	}
	a.httpsCert = r
	var roots *x509.CertPool
	if c.TLS.CAFile != "" {
		pem, err := os.ReadFile(c.TLS.CAFile)
		if err != nil {
			return fmt.Errorf("tls ca_file: %w", err)
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return fmt.Errorf("tls ca_file %s holds no PEM certificate", c.TLS.CAFile)
		}
	}
	srv := &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return r.get(), nil },
	}
	if c.TLS.VerifyHTTPSClient {
		srv.ClientAuth, srv.ClientCAs = tls.RequireAndVerifyClientCert, roots
	}
	a.httpsServer = srv
	cli := &tls.Config{
		MinVersion:           tls.VersionTLS12,
		RootCAs:              roots,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return r.get(), nil },
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cli
	a.internodeTransport = tr
	return nil
}

// internodeClient is how this agent calls another agent's HTTP port.
func (a *Agent) internodeClient(timeout time.Duration) *http.Client {
	if a.internodeTransport == nil {
		return &http.Client{Timeout: timeout}
	}
	return &http.Client{Timeout: timeout, Transport: a.internodeTransport}
}

// reloadHTTPS loads the certificate files again; the listeners hand the
// new certificate to every handshake from then on.
func (a *Agent) reloadHTTPS() error {
	if a.httpsCert == nil {
		return nil
	}
	if err := a.httpsCert.load(); err != nil {
		return err
	}
	a.logger.Info("reloaded the HTTPS certificate", "cert_file", a.httpsCert.certFile)
	return nil
}

// watchSIGHUP reloads the HTTPS certificate on every SIGHUP until the
// agent shuts down.
func (a *Agent) watchSIGHUP() {
	if a.httpsCert == nil {
		return
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	a.bgWG.Add(1)
	go func() {
		defer a.bgWG.Done()
		defer signal.Stop(ch)
		for {
			select {
			case <-a.shutdownCh:
				return
			case <-ch:
				if err := a.reloadHTTPS(); err != nil {
					a.logger.Error("cannot reload the HTTPS certificate; keeping the old one", "error", err)
				}
			}
		}
	}()
}

// secureListener wraps ln in TLS when HTTPS is on.
func (a *Agent) secureListener(ln net.Listener) net.Listener {
	if a.httpsServer == nil {
		return ln
	}
	return tls.NewListener(ln, a.httpsServer)
}
