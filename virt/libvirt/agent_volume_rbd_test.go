package libvirt_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/storage"
	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// TestAgentAttachesAnRBDVolume: host A's storage agent keeps volumes in
// the real Ceph cluster (RBD backend); a volume made there attaches to a
// running instance on host B (a second libvirtd) as an RBD network disk
// through B's libvirt ceph secret, without any export from A. The data
// written into the image before reads through the attachment, data
// written through it is in the image after the detach, and deleting the
// volume removes the image.
func TestAgentAttachesAnRBDVolume(t *testing.T) {
	began := time.Now()
	r := rbdHosts(t)
	c, ceph, hb, id, secret := r.c, r.ceph, r.hb, r.id, r.secret
	t.Logf("instance ACTIVE on B, A's storage agent up %v after the start", time.Since(began))
	vol := r.volume(t, "data")
	spec := vol.ProviderLocation
	ceph.io(t, spec, "write -P 0xab 0 64k")

	start := time.Now()
	c.task(id, structs.OpAttachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	v := c.waitVolume(vol.ID, structs.VolumeInUse)
	t.Logf("in-use %v after the attach was asked", time.Since(start))
	if att := v.AttachmentOf(id); att == nil || att.Host != hb.agent.HostID() {
		t.Fatalf("attachment: %+v", v.Attachments)
	}
	lvb := rawConnTo(t, r.peer.URI)
	dom, err := lvb.DomainLookupByName(hb.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	alias := rbdDiskAlias(t, lvb, dom, spec, secret)
	readThrough(t, lvb, dom, alias, 0xab, 0)
	writeThrough(t, lvb, dom, alias, 0xcd, 64<<10)

	c.task(id, structs.OpDetachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	if v := c.waitVolume(vol.ID, structs.VolumeAvailable); len(v.Attachments) != 0 {
		t.Fatalf("attachments after the detach: %+v", v.Attachments)
	}
	if x, _ := lvb.DomainGetXMLDesc(dom, 0); strings.Contains(x, "protocol='rbd'") {
		t.Fatalf("RBD disk still in B's domain after the detach:\n%s", x)
	}
	ceph.io(t, spec, "read -P 0xab 0 64k")
	ceph.io(t, spec, "read -P 0xcd 64k 64k")
	t.Logf("detached, data intact, %v after the attach was asked", time.Since(start))

	if err := c.rpc("Volume.Delete", &structs.VolumeDeleteRequest{VolumeID: vol.ID, ProjectID: "p1"}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "the image deleted", func() error {
		out, err := exec.Command("rbd", "-c", ceph.conf, "--id", "cinder", "ls", "volumes").Output()
		if err != nil {
			return err
		}
		if strings.Contains(string(out), storage.RBDVolumeImage(vol.ID)) {
			return errors.New("the volume's image is still in the pool")
		}
		return nil
	})
}

// rbdCloud is an instance on host B (a second libvirtd with the libvirt
// ceph secret) and host A, a storage host whose storage agent keeps
// volumes in the test Ceph cluster.
type rbdCloud struct {
	c      *cloud
	ceph   *cephCluster
	hb, ha *host
	peer   *libvirtpeer.Peer
	id     string
	secret string
}

// rbdHosts starts an rbdCloud with its instance ACTIVE on B.
func rbdHosts(t *testing.T) *rbdCloud {
	t.Helper()
	r := &rbdCloud{ceph: needCeph(t), c: newCloud(t), peer: libvirtpeer.Start(t), secret: uuid.NewString()}
	attach := &client.CephAttach{MonHosts: []string{r.ceph.mon}, User: "cinder", SecretUUID: r.secret}
	r.hb = &host{name: "hvb", env: newEnv(t, func(cfg *libvirt.Config) { cfg.HostName, cfg.URI = "hvb", r.peer.URI }),
		dataDir: t.TempDir(), syncEvery: time.Second, ceph: attach}
	r.hb.drv = r.hb.env.drv
	if err := r.hb.drv.DefineCephSecret(ctx(t), r.secret, "cinder", r.ceph.key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.hb.drv.UndefineSecret(context.Background(), r.secret) })
	r.c.mu.Lock()
	r.c.hosts[r.hb.name] = r.hb
	r.c.mu.Unlock()
	r.c.startAgent(r.hb)
	r.id = r.c.boot("vm").ID

	r.ha = &host{name: "hva", env: newEnv(t, func(cfg *libvirt.Config) { cfg.HostName = "hva" }),
		dataDir: t.TempDir(), syncEvery: time.Second, storageGB: 20, backend: structs.VolumeBackendRBD, ceph: attach}
	r.ha.drv = r.ha.env.drv
	r.c.mu.Lock()
	r.c.hosts[r.ha.name] = r.ha
	r.c.mu.Unlock()
	r.c.startAgent(r.ha)
	sa, err := storage.New(storage.Config{HostID: r.ha.agent.HostID(), NodeSecret: r.ha.agent.NodeSecret(), RPC: r.c.srv,
		Backend: r.ceph.rbd, Logger: testLogger(t, "storage"), MaxQueryTime: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	saCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); sa.Run(saCtx) }()
	t.Cleanup(func() { stop(); <-done })
	return r
}

// volume creates a 1 GB volume in A's pool and waits until it is
// available; the test's end deletes its image.
func (r *rbdCloud) volume(t *testing.T, name string) *structs.Volume {
	t.Helper()
	var created structs.SingleVolumeResponse
	if err := r.c.rpc("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p1", Volume: &structs.Volume{Name: name, SizeGB: 1}}, &created); err != nil {
		t.Fatal(err)
	}
	vol := r.c.waitVolume(created.Volume.ID, structs.VolumeAvailable)
	t.Cleanup(func() { _ = r.ceph.rbd.DeleteVolume(context.Background(), vol.ID) })
	if vol.Host != r.ha.agent.HostID() || vol.Backend != structs.VolumeBackendRBD {
		t.Fatalf("volume on %s as %s, want A (%s) as rbd", vol.Host, vol.Backend, r.ha.agent.HostID())
	}
	return vol
}
