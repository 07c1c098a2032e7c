package libvirt_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// addStorageHost is addHost for a host that is also a storage host.
func (c *cloud) addStorageHost(name string) *host {
	c.t.Helper()
	h := &host{name: name, env: newEnv(c.t, func(cfg *libvirt.Config) { cfg.HostName = name }),
		dataDir: c.t.TempDir(), syncEvery: time.Second, storageGB: 20}
	h.drv = h.env.drv
	c.mu.Lock()
	c.hosts[name] = h
	c.mu.Unlock()
	c.startAgent(h)
	return h
}

// fileVolume creates a volume of project p1 that the storage host
// reports built in file, a qcow2 of the volume's size (1 GB, sparse)
// made with qemu-img: a disk smaller than its volume would be grown by
// the host's agent as an extended one.
func (c *cloud) fileVolume(h *host, file string) string {
	c.t.Helper()
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", file, "1G").CombinedOutput(); err != nil {
		c.t.Fatalf("qemu-img create: %v: %s", err, out)
	}
	var resp structs.SingleVolumeResponse
	if err := c.rpc("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p1", Volume: &structs.Volume{Name: "data", SizeGB: 1}}, &resp); err != nil {
		c.t.Fatal(err)
	}
	if err := c.rpc("Volume.Report", &structs.VolumeReportRequest{HostID: resp.Volume.Host, Update: &structs.VolumeUpdateEntry{
		ID: resp.Volume.ID, FromStatus: []string{structs.VolumeCreating}, Status: structs.VolumeAvailable, ProviderLocation: &file},
		WriteRequest: structs.WriteRequest{AuthToken: h.agent.NodeSecret()}}, &structs.GenericResponse{}); err != nil {
		c.t.Fatal(err)
	}
	return resp.Volume.ID
}

func (c *cloud) waitVolume(id, status string) *structs.Volume {
	c.t.Helper()
	var v *structs.Volume
	c.waitFor("volume "+status, statusWait, func() error {
		var resp structs.SingleVolumeResponse
		if err := c.rpc("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: id}, &resp); err != nil {
			return err
		}
		if v = resp.Volume; v.Status != status {
			return fmt.Errorf("status %s", v.Status)
		}
		return nil
	})
	return v
}

// liveXML is the live definition of an instance's domain.
func liveXML(t *testing.T, h *host, id string) string {
	t.Helper()
	dom, err := h.env.raw.DomainLookupByName(h.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	x, err := h.env.raw.DomainGetXMLDesc(dom, 0)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func fileHash(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return sum[:]
}

// TestAgentAttachesAndDetachesAVolume: an attach_volume task through
// the servers makes the host's agent hot-plug the volume's file into
// the running domain (a SCSI disk of the live XML with the volume's
// serial) and the volume in-use; detach_volume unplugs it, the volume is
// available again, and the file is left as it was.
func TestAgentAttachesAndDetachesAVolume(t *testing.T) {
	t.Parallel()
	qemutest.Need(t, "qemu-img")
	c := newCloud(t)
	h := c.addStorageHost("hv1")
	id := c.boot("vm").ID
	file := filepath.Join(t.TempDir(), "volume.qcow2")
	vol := c.fileVolume(h, file)
	before := fileHash(t, file)

	start := time.Now()
	c.task(id, structs.OpAttachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol}
	})
	v := c.waitVolume(vol, structs.VolumeInUse)
	t.Logf("in-use %v after the attach was asked", time.Since(start))
	if a := v.AttachmentOf(id); a == nil || a.Device != "/dev/sdb" {
		t.Fatalf("attachment: %+v", v.Attachments)
	}
	c.waitStatus(id, "ACTIVE")
	if x := liveXML(t, h, id); !strings.Contains(x, file) || !strings.Contains(x, "<target dev='sdb' bus='scsi'/>") ||
		!strings.Contains(x, vol[:20]) {
		t.Fatalf("the volume is not a disk of the running domain:\n%s", x)
	}

	start = time.Now()
	c.task(id, structs.OpDetachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol}
	})
	if v := c.waitVolume(vol, structs.VolumeAvailable); len(v.Attachments) != 0 {
		t.Fatalf("attachments after the detach: %+v", v.Attachments)
	}
	t.Logf("available %v after the detach was asked", time.Since(start))
	c.waitStatus(id, "ACTIVE")
	if x := liveXML(t, h, id); strings.Contains(x, file) {
		t.Fatalf("the volume is still a disk of the running domain:\n%s", x)
	}
	if after := fileHash(t, file); !bytes.Equal(before, after) {
		t.Fatal("the detached volume's file changed")
	}
}
