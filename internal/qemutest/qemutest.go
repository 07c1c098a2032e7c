// Package qemutest runs QEMU's disk tools for tests that check that
// what a guest wrote survives an operation: qemu-io writes a byte
// pattern into a disk and reads it back later. It owns finding the tools
// (a missing one fails the test under CI=true and skips it otherwise)
// and reading qemu-io's verdict. It must not be imported by anything but
// tests, and must not start or stop QEMU for a test: it only opens disks.
package qemutest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Need returns the path of each named qemu-utils tool, in order. A
// missing tool fails the test when CI=true (CI installs qemu-utils, so
// its absence is a broken machine) and skips it otherwise.
func Need(t testing.TB, names ...string) []string {
	t.Helper()
	paths := make([]string, len(names))
	for i, name := range names {
		p, err := exec.LookPath(name)
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s (qemu-utils) is required under CI=true: %v", name, err)
			}
			t.Skipf("%s (qemu-utils) is not installed", name)
		}
		paths[i] = p
	}
	return paths
}

// Opts says how qemu-io opens its target.
type Opts struct {
	// Format is the target's format: qcow2 when empty; raw for RBD and
	// NBD targets.
	Format string
	// ReadOnly opens the target read-only (-r).
	ReadOnly bool
	// Share opens the target read-only without taking its lock (-r -U),
	// as a disk a running QEMU holds must be read.
	Share bool
	// TLSDir opens an NBD target (NBDExport) over TLS as a client with
	// the certificates in this directory (ca-cert.pem, client-cert.pem,
	// client-key.pem, as libvirt lays out nbd_tls_x509_cert_dir).
	TLSDir string
}

// NBDExport is the qemu-io target of export name on the NBD server at
// addr (host:port), for Try with Opts.TLSDir.
func NBDExport(addr, name string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf("driver=nbd,server.type=inet,server.host=%s,server.port=%s,export=%s", host, port, name)
}

// Try runs qemu-io commands on target and returns what it printed and
// whether every command succeeded. qemu-io exits 1 when any command
// fails, a read whose pattern does not match included, so a false
// verdict is how a test learns data is gone.
func Try(t testing.TB, target string, o Opts, cmds ...string) (string, bool) {
	t.Helper()
	bin := Need(t, "qemu-io")[0]
	format := o.Format
	if format == "" {
		format = "qcow2"
	}
	args := []string{"-f", format}
	if o.TLSDir != "" {
		// --image-opts takes the format from the target; -f is refused.
		args = []string{"--object", "tls-creds-x509,id=tls0,endpoint=client,dir=" + o.TLSDir, "--image-opts"}
		target += ",tls-creds=tls0"
	}
	switch {
	case o.Share:
		args = append(args, "-r", "-U")
	case o.ReadOnly:
		args = append(args, "-r")
	}
	for _, c := range cmds {
		args = append(args, "-c", c)
	}
	out, err := exec.Command(bin, append(args, target)...).CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("qemu-io %q on %s: %v: %s", cmds, target, err, out)
	}
	return string(out), err == nil && !strings.Contains(string(out), "Pattern verification failed")
}

// Must is Try that fails the test unless every command succeeded.
func Must(t testing.TB, target string, o Opts, cmds ...string) string {
	t.Helper()
	out, ok := Try(t, target, o, cmds...)
	if !ok {
		t.Fatalf("qemu-io %q on %s: %s", cmds, target, out)
	}
	return out
}

// IO runs qemu-io commands on a qcow2 file no one holds and fails the
// test unless every one succeeded.
func IO(t testing.TB, file string, cmds ...string) string {
	t.Helper()
	return Must(t, file, Opts{}, cmds...)
}
