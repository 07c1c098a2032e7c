package agent

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/tlsutil"
)

// TestAgentServesVolumesOverNBD: an agent with storage { nbd_address }
// and TLS files advertises its NBD server, and a volume of its pool
// attached to an instance on another host (a simulated one) is served
// as that attachment's export, over TLS to the certificate of the
// instance's host (cloudctl tls cert create -client -host) and not to
// the subject the agents share, until the detach, which stops the
// export's daemon.
func TestAgentServesVolumesOverNBD(t *testing.T) {
	qemutest.Need(t, "qemu-img", "qemu-io", "qemu-storage-daemon")
	dir := t.TempDir()
	caPEM, caKey, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := tlsutil.ParseCA(caPEM, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.IssueRole(tlsutil.CertOptions{Role: tlsutil.RoleClient})
	if err != nil {
		t.Fatal(err)
	}
	hostCert, hostKey, err := ca.IssueRole(tlsutil.CertOptions{Role: tlsutil.RoleClient, Host: "test-sim-001"})
	if err != nil {
		t.Fatal(err)
	}
	qemuDir, sharedDir := filepath.Join(dir, "qemu"), filepath.Join(dir, "shared")
	for path, b := range map[string][]byte{filepath.Join(dir, "ca.pem"): caPEM, filepath.Join(dir, "cert.pem"): cert,
		filepath.Join(dir, "key.pem"): key, filepath.Join(qemuDir, "ca-cert.pem"): caPEM,
		filepath.Join(qemuDir, "client-cert.pem"): hostCert, filepath.Join(qemuDir, "client-key.pem"): hostKey,
		filepath.Join(sharedDir, "ca-cert.pem"): caPEM, filepath.Join(sharedDir, "client-cert.pem"): cert,
		filepath.Join(sharedDir, "client-key.pem"): key} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, string(b))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var dataDir string
	// Runs after the agent's own clean-up: the daemon outlives an agent
	// by design, not a test.
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(dataDir, "storage-nbd", "qsd.pid")); err == nil {
			if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	a := testAgent(t, func(c *Config) {
		c.Client = &ClientConfig{SimulatedHosts: 1, Storage: &StorageConfig{PoolDir: filepath.Join(dir, "pool"), CapacityGB: 20, NBDAddress: addr}}
		c.TLS = &TLSConfig{CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem")}
	})
	dataDir = a.config.DataDir

	var vr structs.SingleVolumeResponse
	if err := a.rpc.RPC("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p1", Volume: &structs.Volume{Name: "far", SizeGB: 1}}, &vr); err != nil {
		t.Fatal(err)
	}
	vol := waitVolumeRPC(t, a, vr.Volume.ID, structs.VolumeAvailable)
	qemutest.IO(t, vol.ProviderLocation, "write -P 0xab 0 64k")
	id, volTask := bootBesideVolume(t, a, vol)
	volTask(structs.OpAttachVolume)
	v := waitVolumeRPC(t, a, vol.ID, structs.VolumeInUse)
	name := structs.VolumeExportName(vol.ID, v.AttachmentOf(id).ID)
	// The fake driver does not wait for the export as QEMU would: the
	// storage agent serves it once it sees the attachment.
	read := func(certDir string) error {
		if out, ok := qemutest.Try(t, qemutest.NBDExport(addr, name), qemutest.Opts{TLSDir: certDir}, "read -P 0xab 0 64k"); !ok {
			return fmt.Errorf("read the export %s: %s", name, out)
		}
		return nil
	}
	waitLong(t, "the export served", func() error { return read(qemuDir) })
	if err := read(sharedDir); err == nil {
		t.Fatal("the agents' shared certificate opened the export")
	}

	volTask(structs.OpDetachVolume)
	waitVolumeRPC(t, a, vol.ID, structs.VolumeAvailable)
	waitLong(t, "the export's daemon to stop", func() error {
		if _, err := os.Stat(filepath.Join(dataDir, "storage-nbd", "qsd.pid")); err == nil {
			return fmt.Errorf("the daemon runs")
		}
		return nil
	})
}

func waitVolumeRPC(t *testing.T, a *Agent, id, status string) *structs.Volume {
	t.Helper()
	var v *structs.Volume
	waitLong(t, "volume "+status, func() error {
		var r structs.SingleVolumeResponse
		if err := a.rpc.RPC("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: id}, &r); err != nil {
			return err
		}
		if v = r.Volume; v.Status != status {
			return fmt.Errorf("status %s (%s)", v.Status, v.ErrorMessage)
		}
		return nil
	})
	return v
}

// bootBesideVolume boots an instance on the agent's simulated host
// test-sim-001, which must not be vol's storage host, and returns it
// with a function that runs a volume task (attach, detach) of vol on it.
func bootBesideVolume(t *testing.T, a *Agent, vol *structs.Volume) (string, func(op string)) {
	t.Helper()
	id := bootActive(t, a, &structs.InstanceCreateRequest{Name: "vm", FlavorID: "1", ImageID: "cirros",
		ProjectID: "p1", UserID: "u1", RequestID: "req-vm", TargetHost: "test-sim-001"}, func(inst *structs.Instance) error {
		if inst.HostID == vol.Host {
			t.Fatalf("the instance is on the storage host")
		}
		return nil
	}).ID
	return id, func(op string) {
		t.Helper()
		if err := a.rpc.RPC("Instance.Task", &structs.InstanceTaskRequest{InstanceID: id, Op: op, ProjectID: "p1", UserID: "u1", Admin: true,
			Volume: &structs.VolumeAttachRequest{VolumeID: vol.ID}}, &structs.InstanceTaskResponse{}); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
}
