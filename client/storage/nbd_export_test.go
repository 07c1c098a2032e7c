package storage

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/tlsutil"
)

// testCA writes a CA and certificates it signed into dir, each in a
// directory laid out as QEMU's tls-creds-x509 reads a client's: two
// hypervisor hosts' own (compute-a, compute-b), the subject all client
// agents shared before them (shared, also the exporter's server
// certificate) and a command-line user's (cli, which must never open an
// export).
type testCA struct {
	caFile, certFile, keyFile string
	dirs                      map[string]string
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	dir := t.TempDir()
	caPEM, caKey, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := tlsutil.ParseCA(caPEM, caKey)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCA{caFile: filepath.Join(dir, "ca.pem"), dirs: map[string]string{}}
	write := func(path string, b []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(c.caFile, caPEM)
	for name, opts := range map[string]tlsutil.CertOptions{
		"shared":    {Role: tlsutil.RoleClient},
		"cli":       {Role: tlsutil.RoleCLI},
		"compute-a": {Role: tlsutil.RoleClient, Host: "compute-a"},
		"compute-b": {Role: tlsutil.RoleClient, Host: "compute-b"},
	} {
		cert, key, err := ca.IssueRole(opts)
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(dir, name)
		write(filepath.Join(d, "ca-cert.pem"), caPEM)
		write(filepath.Join(d, "client-cert.pem"), cert)
		write(filepath.Join(d, "client-key.pem"), key)
		c.dirs[name] = d
	}
	c.certFile, c.keyFile = filepath.Join(c.dirs["shared"], "client-cert.pem"), filepath.Join(c.dirs["shared"], "client-key.pem")
	return c
}

// needQSD fails under CI=true, and skips elsewhere, without
// qemu-storage-daemon.
func needQSD(t *testing.T) {
	t.Helper()
	qemutest.Need(t, "qemu-storage-daemon", "qemu-io")
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// exportedVolume makes volume v1 in a new pool, writes into it with
// the qemu-io command write, and starts an exporter for it (stopped at
// the test's end) with a state dir and a free address of its own.
func exportedVolume(t *testing.T, write string) (ca *testCA, path, state, addr string, e *NBDExporter) {
	t.Helper()
	ca = newTestCA(t)
	path, err := testPool(t).CreateVolume(context.Background(), &structs.Volume{ID: "v1", SizeGB: 1}, Source{})
	if err != nil {
		t.Fatal(err)
	}
	qemutest.IO(t, path, write)
	state, addr = t.TempDir(), net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	e = testExporter(t, ca, state, addr)
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Error(err)
		}
	})
	return ca, path, state, addr, e
}

func testExporter(t *testing.T, ca *testCA, state, addr string) *NBDExporter {
	t.Helper()
	e, err := NewNBDExporter(NBDConfig{StateDir: state, Address: addr, CAFile: ca.caFile, CertFile: ca.certFile,
		KeyFile: ca.keyFile, Every: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestNBDExportLifecycle: one export per attachment, served over TLS
// to the agents' certificate only; recorded, so that a new exporter
// (an agent restart) serves it again, and a daemon that dies is started
// again with it; gone when no attachment wants it, with the daemon.
func TestNBDExportLifecycle(t *testing.T) {
	needQSD(t)
	ca, path, state, addr, e := exportedVolume(t, "write -P 0xab 0 64k")
	name := structs.VolumeExportName("v1", "att-1")
	x := Export{Name: name, Path: path, Hosts: []string{"compute-a"}}
	if err := e.Sync(context.Background(), []Export{x}); err != nil {
		t.Fatal(err)
	}
	agentDir := ca.dirs["compute-a"]
	export := qemutest.NBDExport(addr, name)
	qemutest.Must(t, export, qemutest.Opts{TLSDir: agentDir}, "read -P 0xab 0 64k")
	if out, ok := qemutest.Try(t, export, qemutest.Opts{TLSDir: ca.dirs["cli"]}, "read 0 4k"); ok {
		t.Fatalf("a user's certificate opened the export: %s", out)
	}
	if out, ok := qemutest.Try(t, qemutest.NBDExport(addr, structs.VolumeExportName("v1", "att-2")), qemutest.Opts{TLSDir: agentDir}, "read 0 4k"); ok {
		t.Fatalf("another attachment's name opened the export: %s", out)
	}
	qemutest.Must(t, export, qemutest.Opts{TLSDir: agentDir}, "write -P 0xcd 64k 64k")

	// A restarted agent adopts the running daemon and its export, once
	// the old one has let go of the monitor.
	e.q.close()
	e2 := testExporter(t, ca, state, addr)
	t.Cleanup(func() { _ = e2.Stop() })
	pid := e2.daemonPid()
	if err := e2.Sync(context.Background(), []Export{x}); err != nil || e2.daemonPid() != pid {
		t.Fatalf("adopt: %v (daemon %d, was %d)", err, e2.daemonPid(), pid)
	}
	// A daemon that dies is started again with the recorded exports.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e2.Run(ctx) }()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the export served again", func() error {
		if out, ok := qemutest.Try(t, export, qemutest.Opts{TLSDir: agentDir}, "read -P 0xcd 64k 64k"); !ok {
			return fmt.Errorf("read through the export: %s", out)
		}
		return nil
	})
	if e2.daemonPid() == pid || e2.daemonPid() == 0 {
		t.Fatalf("daemon %d after %d was killed", e2.daemonPid(), pid)
	}
	cancel()
	<-done

	// Detached: the export and, with no other, the daemon are gone.
	newPid := e2.daemonPid()
	if err := e2.Sync(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if alive(newPid) || e2.daemonPid() != 0 {
		t.Fatalf("daemon %d still runs with no export", newPid)
	}
	qemutest.IO(t, path, "read -P 0xcd 64k 64k")
}

func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: %v", what, err)
}
