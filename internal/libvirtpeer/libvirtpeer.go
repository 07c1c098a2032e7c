// Package libvirtpeer starts, for a test, a second libvirtd on this
// machine that the machine's own libvirtd can live-migrate guests to:
// scripts/libvirt-peer.sh runs it in a private mount namespace with its
// own state directories, socket and host UUID, on the same filesystem
// (shared storage). It is for tests only and must not be imported by
// production code.
package libvirtpeer

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// script is scripts/libvirt-peer.sh of this source tree.
func script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "scripts", "libvirt-peer.sh")
}

// Peer is a running peer libvirtd.
type Peer struct {
	// URI is how the tests and the machine's libvirtd reach the peer
	// (qemu+unix:///system?socket=/run/stratus-peer-NAME/libvirt-sock):
	// the migration URI of the peer's host.
	URI string
	// HostURI is how the peer's libvirtd reaches the machine's own:
	// the migration URI of the first host, for moves back to it.
	HostURI string
	// NBDTLSDir is the peer's nbd_tls_x509_cert_dir: the certificates
	// (ca-cert.pem, client-cert.pem, client-key.pem) its QEMUs present
	// to the NBD servers of disks with TLS, which the test writes.
	NBDTLSDir string
}

// Start starts a peer libvirtd of the test's own; t.Cleanup destroys
// its guests and stops it. When it cannot be started (not root, no
// libvirtd, no mount namespaces) the test is skipped — or fails under
// CI=true, where that is a broken setup.
func Start(t testing.TB) *Peer {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "t" + hex.EncodeToString(b)
	out, err := exec.Command("bash", script(), "start", name).CombinedOutput()
	t.Cleanup(func() {
		if out, err := exec.Command("bash", script(), "stop", name).CombinedOutput(); err != nil {
			t.Errorf("stop peer libvirtd %s: %v: %s", name, err, out)
		}
	})
	if err != nil {
		msg := fmt.Sprintf("cannot start a peer libvirtd (scripts/libvirt-peer.sh, as root after scripts/libvirt-setup.sh): %v: %s", err, out)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	p := &Peer{URI: lines[len(lines)-1]}
	hostURI, err := exec.Command("bash", script(), "host-uri", name).Output()
	if err != nil {
		t.Fatalf("peer libvirtd %s: host-uri: %v", name, err)
	}
	p.HostURI = strings.TrimSpace(string(hostURI))
	tlsDir, err := exec.Command("bash", script(), "nbd-tls-dir", name).Output()
	if err != nil {
		t.Fatalf("peer libvirtd %s: nbd-tls-dir: %v", name, err)
	}
	p.NBDTLSDir = strings.TrimSpace(string(tlsDir))
	return p
}
