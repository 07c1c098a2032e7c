package libvirt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/client/storage"
	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/tlsutil"
)

// nbdCerts writes a CA, the storage host's certificate (client role)
// and, in clientDir laid out as libvirt's nbd_tls_x509_cert_dir, the
// certificate of the hypervisor host named host (cloudctl tls cert
// create -client -host): the storage host admits it to the exports of
// that host's attachments only. hostCert gives a further host its own.
func nbdCerts(t *testing.T, clientDir, host string) (caFile, certFile, keyFile string, hostCert func(dir, host string)) {
	t.Helper()
	caPEM, caKey, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := tlsutil.ParseCA(caPEM, caKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(files map[string][]byte) {
		t.Helper()
		for path, b := range files {
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	issue := func(host string) (cert, key []byte) {
		t.Helper()
		cert, key, err := ca.IssueRole(tlsutil.CertOptions{Role: tlsutil.RoleClient, Host: host})
		if err != nil {
			t.Fatal(err)
		}
		return cert, key
	}
	hostCert = func(dir, host string) {
		t.Helper()
		cert, key := issue(host)
		write(map[string][]byte{filepath.Join(dir, "ca-cert.pem"): caPEM, filepath.Join(dir, "client-cert.pem"): cert,
			filepath.Join(dir, "client-key.pem"): key})
	}
	cert, key := issue("")
	dir := t.TempDir()
	caFile, certFile, keyFile = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	write(map[string][]byte{caFile: caPEM, certFile: cert, keyFile: key})
	hostCert(clientDir, host)
	return caFile, certFile, keyFile, hostCert
}

// storageAgent is a storage host's storage agent with its NBD
// exporter, which can be stopped and started again as after a restart
// of the agent's process.
type storageAgent struct {
	c      *cloud
	h      *host
	pool   *storage.FilePool
	cfg    storage.NBDConfig
	cancel context.CancelFunc
	done   chan struct{}
	exp    *storage.NBDExporter
}

func (s *storageAgent) start() {
	s.c.t.Helper()
	exp, err := storage.NewNBDExporter(s.cfg)
	if err != nil {
		s.c.t.Fatal(err)
	}
	sa, err := storage.New(storage.Config{HostID: s.h.agent.HostID(), NodeSecret: s.h.agent.NodeSecret(), RPC: s.c.srv,
		Backend: s.pool, Exports: exp, Logger: testLogger(s.c.t, "storage"), MaxQueryTime: 5 * time.Second})
	if err != nil {
		s.c.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.exp, s.cancel, s.done = exp, cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		done := make(chan struct{})
		go func() { defer close(done); exp.Run(ctx) }()
		sa.Run(ctx)
		<-done
	}()
}

func (s *storageAgent) stop() {
	s.cancel()
	<-s.done
}

// writeThrough writes pattern at offset (64 KiB) through the disk with
// device alias, as the domain's QEMU sees it (HMP qemu-io, whose report
// goes to QEMU's log: the data is checked in the volume's file later).
func writeThrough(t *testing.T, lv *golibvirt.Libvirt, dom golibvirt.Domain, alias string, pattern byte, offset int) {
	t.Helper()
	// Flushed, as a guest flushes what must outlive a crash: the
	// storage host's qcow2 metadata of a new cluster is cached until then.
	for _, c := range []string{fmt.Sprintf("write -P 0x%02x %d 64k", pattern, offset), "flush"} {
		cmd := fmt.Sprintf("qemu-io -d %s %q", alias, c)
		if out, err := lv.QEMUDomainMonitorCommand(dom, cmd, 1); err != nil || strings.TrimSpace(out) != "" {
			t.Fatalf("%s: %v: %s", cmd, err, out)
		}
	}
}

// readThrough checks, with qemu-io, that the disk with device alias
// reads as pattern at offset (64 KiB) as the domain's QEMU sees it: the
// QEMU serves its node for the check, read-only, on a unix socket.
func readThrough(t *testing.T, lv *golibvirt.Libvirt, dom golibvirt.Domain, alias string, pattern byte, offset int) {
	t.Helper()
	if err := tryReadThrough(t, lv, dom, alias, pattern, offset); err != nil {
		t.Fatal(err)
	}
}

// tryReadThrough is readThrough answering an error instead.
func tryReadThrough(t *testing.T, lv *golibvirt.Libvirt, dom golibvirt.Domain, alias string, pattern byte, offset int) error {
	t.Helper()
	qmp := func(cmd string) string {
		t.Helper()
		out, err := lv.QEMUDomainMonitorCommand(dom, cmd, 0)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return out
	}
	var blocks struct {
		Return []struct {
			QDev     string `json:"qdev"`
			Inserted *struct {
				NodeName string `json:"node-name"`
			} `json:"inserted"`
		} `json:"return"`
	}
	if err := json.Unmarshal([]byte(qmp(`{"execute":"query-block"}`)), &blocks); err != nil {
		t.Fatal(err)
	}
	node := ""
	for _, b := range blocks.Return {
		// A virtio-blk disk's backend is a child of its PCI device
		// (…/virtio-disk0/virtio-backend).
		if (b.QDev == alias || strings.HasSuffix(b.QDev, "/"+alias) || strings.HasSuffix(b.QDev, "/"+alias+"/virtio-backend")) && b.Inserted != nil {
			node = b.Inserted.NodeName
		}
	}
	if node == "" {
		t.Fatalf("no block node of %s: %+v", alias, blocks.Return)
	}
	sock := filepath.Join(t.TempDir(), "peek.sock")
	qmp(fmt.Sprintf(`{"execute":"nbd-server-start","arguments":{"addr":{"type":"unix","data":{"path":%q}}}}`, sock))
	defer qmp(`{"execute":"nbd-server-stop"}`)
	qmp(fmt.Sprintf(`{"execute":"block-export-add","arguments":{"type":"nbd","id":"peek","node-name":%q,"name":"peek","writable":false}}`, node))
	defer qmp(`{"execute":"block-export-del","arguments":{"id":"peek"}}`)
	cmd := fmt.Sprintf("read -P 0x%02x %d 64k", pattern, offset)
	if out, ok := qemutest.Try(t, "nbd+unix:///peek?socket="+sock, qemutest.Opts{Format: "raw", ReadOnly: true}, cmd); !ok {
		return fmt.Errorf("%s through the attachment: %s", cmd, out)
	}
	return nil
}

// needNBDTools checks for the tools the NBD tests run (qemu-img,
// qemu-io, qemu-storage-daemon): a failure under CI=true when one is
// missing, else a skip.
func needNBDTools(t *testing.T) {
	t.Helper()
	qemutest.Need(t, "qemu-img", "qemu-io", "qemu-storage-daemon")
}

// TestAgentAttachesAVolumeOfAnotherHost: a volume built by host A's
// storage agent in A's pool is attached to an instance on host B (a
// second libvirtd): A's storage agent exports the attachment over NBD
// with TLS, B's QEMU opens it with the agents' certificate, and data
// written to the file before reads through the attachment, and data
// written through it is in the file after the detach. The attachment
// survives a restart of A's storage agent (its daemon is adopted), the
// death of the daemon (the exporter starts another, the guest's QEMU
// reconnects) and a restart of B's agent; the detach ends the export
// and its daemon.
func TestAgentAttachesAVolumeOfAnotherHost(t *testing.T) {
	needNBDTools(t)
	began := time.Now()
	c, hb, ha, sa, peer, id, _ := nbdHosts(t)
	t.Logf("instance ACTIVE on B, A serving NBD %v after the start", time.Since(began))
	nbdAddr := ha.nbdAddr

	var created structs.SingleVolumeResponse
	if err := c.rpc("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p1", Volume: &structs.Volume{Name: "data", SizeGB: 1}}, &created); err != nil {
		t.Fatal(err)
	}
	vol := c.waitVolume(created.Volume.ID, structs.VolumeAvailable)
	if vol.Host != ha.agent.HostID() {
		t.Fatalf("volume on %s, want A (%s)", vol.Host, ha.agent.HostID())
	}
	file := vol.ProviderLocation
	qemutest.IO(t, file, "write -P 0xab 0 64k")

	start := time.Now()
	c.task(id, structs.OpAttachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	v := c.waitVolume(vol.ID, structs.VolumeInUse)
	t.Logf("in-use %v after the attach was asked", time.Since(start))
	att := v.AttachmentOf(id)
	if att == nil || att.Host != hb.agent.HostID() {
		t.Fatalf("attachment: %+v", v.Attachments)
	}
	lvb := rawConnTo(t, peer.URI)
	dom, err := lvb.DomainLookupByName(hb.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	alias := nbdDiskAlias(t, lvb, dom, structs.VolumeExportName(vol.ID, att.ID), nbdAddr)
	readThrough(t, lvb, dom, alias, 0xab, 0)
	readThrough(t, lvb, dom, alias, 0, 64<<10)
	t.Logf("read through the attachment %v after the attach was asked", time.Since(start))
	writeThrough(t, lvb, dom, alias, 0xcd, 64<<10)

	// A's storage agent restarts: it adopts the daemon, which served on.
	pid := daemonPid(t, sa.cfg.StateDir)
	sa.stop()
	sa.start()
	waitUntil(t, 30*time.Second, "the storage agent's first sync", func() error {
		if p := daemonPid(t, sa.cfg.StateDir); p != pid {
			return fmt.Errorf("daemon %d, was %d", p, pid)
		}
		return nil
	})
	readThrough(t, lvb, dom, alias, 0xcd, 64<<10)
	writeThrough(t, lvb, dom, alias, 0xef, 128<<10)
	t.Logf("storage agent restarted %v after the attach was asked", time.Since(start))

	// The daemon dies: the exporter starts another with the export, and
	// the guest's QEMU reconnects to it.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "the export served again to the guest's QEMU", func() error {
		if p := daemonPid(t, sa.cfg.StateDir); p == 0 || p == pid {
			return fmt.Errorf("daemon %d (the killed one was %d)", p, pid)
		}
		return tryReadThrough(t, lvb, dom, alias, 0xef, 128<<10)
	})
	t.Logf("served again %v after the attach was asked", time.Since(start))

	// B's agent restarts: the attachment is still the domain's and the
	// driver's.
	c.restartAgent(hb)
	nbdDiskAlias(t, lvb, dom, structs.VolumeExportName(vol.ID, att.ID), nbdAddr)
	readThrough(t, lvb, dom, alias, 0xef, 128<<10)
	writeThrough(t, lvb, dom, alias, 0x5a, 192<<10)
	t.Logf("B's agent restarted %v after the attach was asked", time.Since(start))

	c.task(id, structs.OpDetachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	if v := c.waitVolume(vol.ID, structs.VolumeAvailable); len(v.Attachments) != 0 {
		t.Fatalf("attachments after the detach: %+v", v.Attachments)
	}
	t.Logf("detached %v after the attach was asked", time.Since(start))
	waitUntil(t, 30*time.Second, "the export's daemon to stop", func() error {
		if p := daemonPid(t, sa.cfg.StateDir); p != 0 {
			return fmt.Errorf("daemon %d still runs", p)
		}
		return nil
	})
	qemutest.IO(t, file, "read -P 0xab 0 64k", "read -P 0xcd 64k 64k", "read -P 0xef 128k 64k", "read -P 0x5a 192k 64k")
}

// nbdDiskAlias finds the domain's disk that opens export name at addr
// with TLS, and returns its device alias.
func nbdDiskAlias(t *testing.T, lv *golibvirt.Libvirt, dom golibvirt.Domain, name, addr string) string {
	t.Helper()
	x, err := lv.DomainGetXMLDesc(dom, 0)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(addr)
	re := regexp.MustCompile(`(?s)<disk type='network'[^>]*>.*?</disk>`)
	for _, d := range re.FindAllString(x, -1) {
		if strings.Contains(d, "protocol='nbd' name='"+name+"' tls='yes'") &&
			strings.Contains(d, "<host name='"+host+"' port='"+port+"'/>") {
			if m := regexp.MustCompile(`<alias name='([^']+)'/>`).FindStringSubmatch(d); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no NBD disk of export %s at %s with TLS in the live domain:\n%s", name, addr, x)
	return ""
}

// daemonPid is the pid of the exporter's daemon in stateDir, 0 when
// none runs.
func daemonPid(t *testing.T, stateDir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(stateDir, "qsd.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		return 0
	}
	return pid
}
