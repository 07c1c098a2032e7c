package command

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"

	"github.com/stratus-cloud/stratus/tlsutil"
)

var tlsCACreateCommand = (&spec{
	synopsis: "Create a certificate authority for agent TLS",
	args:     "[options]",
	help: `Create an ECDSA certificate authority for the agents' mutual TLS, as
"nomad tls ca create" does. It writes <domain>-agent-ca.pem and
<domain>-agent-ca-key.pem to the current directory and refuses to
overwrite existing files. Keep the key safe: whoever holds it can mint
server certificates.`,
	nargs: exactly(0),
	local: true,
	setup: func(fs *flag.FlagSet) runFunc {
		domain := fs.String("domain", tlsutil.DefaultDomain, "The `DOMAIN` of the role names the CA signs (server.<region>.<domain>).")
		days := fs.Int("days", tlsutil.DefaultCADays, "How many `DAYS` the CA is valid.")
		constraint := fs.Bool("name-constraint", false, "Limit the CA to names under -domain, localhost and each -additional-domain.")
		commonName := fs.String("common-name", "", "The CA's common `NAME`. Defaults to \"Stratus Agent CA <serial>\".")
		var extra repeated
		fs.Var(&extra, "additional-domain", "A further `DOMAIN` permitted by -name-constraint; may be repeated.")
		return func(e *env, _ []string) int {
			if *days <= 0 {
				return e.usage("-days must be positive")
			}
			certPEM, keyPEM, err := tlsutil.GenerateCA(tlsutil.CAOptions{Domain: *domain, Days: *days,
				CommonName: *commonName, NameConstraint: *constraint, AdditionalDomains: extra})
			if err != nil {
				return e.fail("Error creating the CA: %v", err)
			}
			certFile, keyFile := caFileNames(*domain)
			if err := writeNew(certFile, certPEM, 0o644, keyFile, keyPEM); err != nil {
				return e.fail("Error writing the CA: %v", err)
			}
			fmt.Fprintf(e.ui.Stdout, "==> CA certificate saved to: %s\n==> CA certificate key saved to: %s\n", certFile, keyFile)
			return 0
		}
	},
}).factory()

var tlsCertCreateCommand = (&spec{
	synopsis: "Create a server, client or CLI certificate signed by the CA",
	args:     "(-server | -client | -cli) [options]",
	help: `Create a certificate and key for an agent or a command-line user,
signed by the CA that "cloudctl tls ca create" made. The certificate's
name ties it to its role and region: server.<region>.<domain> for
servers, client.<region>.<domain> for client agents and
cli.<region>.<domain> for the CLI. With verify_server_hostname, agents
accept only server.<region>.<domain> as a server, so a client
certificate cannot act as one. Server and client certificates also name
localhost and 127.0.0.1. With -host, a client certificate is a
hypervisor host's own: its subject is <host>.client.<region>.<domain>
(host being the agent's name), which storage hosts admit to the NBD
exports of that host's volume attachments only; put it in libvirt's
nbd_tls_x509_cert_dir on that host. Files are written to the current directory as
<region>-<role>-<domain>-<N>.pem and <region>-<role>-<domain>-<N>-key.pem
with the first free N.`,
	nargs: exactly(0),
	local: true,
	setup: func(fs *flag.FlagSet) runFunc {
		server := fs.Bool("server", false, "Create a server certificate.")
		client := fs.Bool("client", false, "Create a client agent certificate.")
		cli := fs.Bool("cli", false, "Create a certificate for the command line (client authentication only).")
		region := fs.String("region", tlsutil.DefaultRegion, "The `REGION` named in the certificate.")
		domain := fs.String("domain", tlsutil.DefaultDomain, "The `DOMAIN` named in the certificate.")
		days := fs.Int("days", tlsutil.DefaultCertDays, "How many `DAYS` the certificate is valid.")
		caFile := fs.String("ca", "", "The CA certificate `FILE`. Defaults to <domain>-agent-ca.pem.")
		keyFile := fs.String("key", "", "The CA key `FILE`. Defaults to <domain>-agent-ca-key.pem.")
		host := fs.String("host", "", "With -client, the `NAME` of the hypervisor host (its agent's name) the certificate identifies.")
		var dnsNames, ipAddrs repeated
		fs.Var(&dnsNames, "additional-dnsname", "A further DNS `NAME` for the certificate; may be repeated.")
		fs.Var(&ipAddrs, "additional-ipaddress", "A further `IP` address for the certificate; may be repeated.")
		return func(e *env, _ []string) int {
			role, msg := pickRole(*server, *client, *cli)
			if msg != "" {
				return e.usage("%s", msg)
			}
			if *days <= 0 {
				return e.usage("-days must be positive")
			}
			if *host != "" && role != tlsutil.RoleClient {
				return e.usage("-host names a hypervisor host: it needs -client")
			}
			var ips []net.IP
			for _, s := range ipAddrs {
				ip := net.ParseIP(strings.TrimSpace(s))
				if ip == nil {
					return e.usage("-additional-ipaddress %q is not an IP address", s)
				}
				ips = append(ips, ip)
			}
			defCert, defKey := caFileNames(*domain)
			ca, err := loadCA(or(*caFile, defCert), or(*keyFile, defKey))
			if err != nil {
				return e.fail("Error loading the CA: %v", err)
			}
			certPEM, keyPEM, err := ca.IssueRole(tlsutil.CertOptions{Role: role, Region: *region, Domain: *domain,
				Days: *days, DNSNames: dnsNames, IPAddresses: ips, Host: *host})
			if err != nil {
				return e.fail("Error creating the certificate: %v", err)
			}
			certOut, keyOut := nextCertFileNames(*region, role, *domain)
			if err := writeNew(certOut, certPEM, 0o644, keyOut, keyPEM); err != nil {
				return e.fail("Error writing the certificate: %v", err)
			}
			fmt.Fprintf(e.ui.Stdout, "==> Using CA file %s and CA key %s\n==> %s certificate for %s saved to: %s\n==> Key saved to: %s\n",
				or(*caFile, defCert), or(*keyFile, defKey), role, certName(role, *host, *region, *domain), certOut, keyOut)
			return 0
		}
	},
}).factory()

// certName is the subject of a new certificate.
func certName(role tlsutil.Role, host, region, domain string) string {
	if host != "" {
		return tlsutil.HostClientName(host, region, domain)
	}
	return tlsutil.RoleName(role, region, domain)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// pickRole turns the role flags into a role, or a usage message.
func pickRole(server, client, cli bool) (tlsutil.Role, string) {
	n, role := 0, tlsutil.Role("")
	for _, r := range []struct {
		set  bool
		role tlsutil.Role
	}{{server, tlsutil.RoleServer}, {client, tlsutil.RoleClient}, {cli, tlsutil.RoleCLI}} {
		if r.set {
			n, role = n+1, r.role
		}
	}
	if n != 1 {
		return "", "exactly one of -server, -client and -cli is required"
	}
	return role, ""
}

func caFileNames(domain string) (cert, key string) {
	return domain + "-agent-ca.pem", domain + "-agent-ca-key.pem"
}

// nextCertFileNames picks the first <region>-<role>-<domain>-<N> whose
// files do not exist yet.
func nextCertFileNames(region string, role tlsutil.Role, domain string) (cert, key string) {
	for n := 0; ; n++ {
		base := fmt.Sprintf("%s-%s-%s-%d", region, role, domain, n)
		cert, key = base+".pem", base+"-key.pem"
		if !exists(cert) && !exists(key) {
			return cert, key
		}
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

func loadCA(certFile, keyFile string) (*tlsutil.CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	return tlsutil.ParseCA(certPEM, keyPEM)
}

// writeNew writes a certificate and its key (mode 0600) without
// overwriting anything: if either file exists, neither is written.
func writeNew(certFile string, certPEM []byte, certMode os.FileMode, keyFile string, keyPEM []byte) error {
	for _, f := range []string{certFile, keyFile} {
		if exists(f) {
			return fmt.Errorf("%s already exists; not overwriting it", f)
		}
	}
	if err := writeExclusive(keyFile, keyPEM, 0o600); err != nil {
		return err
	}
	if err := writeExclusive(certFile, certPEM, certMode); err != nil {
		os.Remove(keyFile)
		return err
	}
	return nil
}

func writeExclusive(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
