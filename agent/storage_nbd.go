package agent

import (
	"context"
	"fmt"
	"net"
	"path/filepath"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/storage"
	"github.com/stratus-cloud/stratus/tlsutil"
)

// checkNBD checks the storage block's nbd_address: a host:port with a
// port, and the tls block's CA, certificate and key, without which the
// exports would have no authentication.
func (c *Config) checkNBD() error {
	st := c.Client.Storage
	if st == nil || st.NBDAddress == "" {
		return nil
	}
	if host, port, err := net.SplitHostPort(st.NBDAddress); err != nil || host == "" || port == "" || port == "0" {
		return fmt.Errorf("client storage nbd_address %q must be host:port, reachable from the other hosts", st.NBDAddress)
	}
	if c.TLS == nil || c.TLS.CAFile == "" || c.TLS.CertFile == "" || c.TLS.KeyFile == "" {
		return fmt.Errorf("client storage nbd_address needs the tls block's ca_file, cert_file and key_file: the exports are served over TLS only")
	}
	return nil
}

// storageNBDAddress is the NBD address the storage host advertises, on
// the machine's own host only.
func (a *Agent) storageNBDAddress(storageHere bool) string {
	if !storageHere || a.config.Client.Storage == nil {
		return ""
	}
	return a.config.Client.Storage.NBDAddress
}

// nbdClientTLS is the agent's client certificate for opening another
// storage host's NBD export itself (a reimage of a boot volume kept
// there); nil without TLS files.
func (a *Agent) nbdClientTLS() *client.NBDClientTLS {
	t := a.config.TLS
	if t == nil || t.CAFile == "" || t.CertFile == "" || t.KeyFile == "" {
		return nil
	}
	return &client.NBDClientTLS{CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile}
}

// startNBDExports starts the exporter of the storage block's
// nbd_address, which the storage agent hands the attachments to
// instances on other hosts; nil when none is configured. Its daemon
// keeps serving over an agent restart.
func (a *Agent) startNBDExports(ctx context.Context) (storage.Exporter, error) {
	st, t := a.config.Client.Storage, a.config.TLS
	if st == nil || st.NBDAddress == "" {
		return nil, nil
	}
	var shared string
	if st.NBDSharedClientCert {
		shared = "CN=" + tlsutil.RoleName(tlsutil.RoleClient, a.config.Region, t.Domain)
		a.logger.Warn("client storage nbd_shared_client_cert: every client agent's shared certificate opens every NBD export here; give each hypervisor host its own (cloudctl tls cert create -client -host) and turn it off")
	}
	e, err := storage.NewNBDExporter(storage.NBDConfig{StateDir: filepath.Join(a.config.DataDir, "storage-nbd"),
		Address: st.NBDAddress, CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile,
		Region: a.config.Region, Domain: t.Domain, SharedClientDN: shared, Logger: a.logger.Named("storage-nbd")})
	if err != nil {
		return nil, err
	}
	a.bgWG.Add(1)
	go func() {
		defer a.bgWG.Done()
		e.Run(ctx)
	}()
	return e, nil
}
