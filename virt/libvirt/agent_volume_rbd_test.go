package libvirt_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/storage"
	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// rbdHosts are two hosts of a cloud that keeps volumes in the real Ceph
// cluster: A (hva) is the storage host, with a storage agent on the RBD
// backend, and B (hvb, on a second libvirtd) runs an instance that
// reaches the images through its libvirt ceph secret.
type rbdHosts struct {
	c      *cloud
	ha, hb *host
	lvb    *golibvirt.Libvirt
	secret string
	// id is the instance running on B.
	id string
}

// startRBDHosts starts the two hosts and boots the instance on B.
func startRBDHosts(t *testing.T, ceph *cephCluster) *rbdHosts {
	t.Helper()
	began := time.Now()
	c := newCloud(t)
	peer := libvirtpeer.Start(t)
	secret := uuid.NewString()
	attach := &client.CephAttach{MonHosts: []string{ceph.mon}, User: "cinder", SecretUUID: secret}

	hb := &host{name: "hvb", env: newEnv(t, func(cfg *libvirt.Config) { cfg.HostName, cfg.URI = "hvb", peer.URI }),
		dataDir: t.TempDir(), syncEvery: time.Second, ceph: attach}
	hb.drv = hb.env.drv
	if err := hb.drv.DefineCephSecret(ctx(t), secret, "cinder", ceph.key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hb.drv.UndefineSecret(context.Background(), secret) })
	c.mu.Lock()
	c.hosts[hb.name] = hb
	c.mu.Unlock()
	c.startAgent(hb)
	id := c.boot("vm").ID
	t.Logf("instance ACTIVE on B %v after the start", time.Since(began))

	ha := &host{name: "hva", env: newEnv(t, func(cfg *libvirt.Config) { cfg.HostName = "hva" }),
		dataDir: t.TempDir(), syncEvery: time.Second, storageGB: 20, backend: structs.VolumeBackendRBD, ceph: attach}
	ha.drv = ha.env.drv
	c.mu.Lock()
	c.hosts[ha.name] = ha
	c.mu.Unlock()
	c.startAgent(ha)
	sa, err := storage.New(storage.Config{HostID: ha.agent.HostID(), NodeSecret: ha.agent.NodeSecret(), RPC: c.srv,
		Backend: ceph.rbd, Logger: testLogger(t, "storage"), MaxQueryTime: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	saCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); sa.Run(saCtx) }()
	t.Cleanup(func() { stop(); <-done })
	return &rbdHosts{c: c, ha: ha, hb: hb, lvb: rawConnTo(t, peer.URI), secret: secret, id: id}
}

// rbdVolume creates a 1 GB volume on A and waits until it is available.
func (r *rbdHosts) rbdVolume(t *testing.T, ceph *cephCluster) *structs.Volume {
	t.Helper()
	var created structs.SingleVolumeResponse
	if err := r.c.rpc("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p1", Volume: &structs.Volume{Name: "data", SizeGB: 1}}, &created); err != nil {
		t.Fatal(err)
	}
	vol := r.c.waitVolume(created.Volume.ID, structs.VolumeAvailable)
	t.Cleanup(func() { _ = ceph.rbd.DeleteVolume(context.Background(), vol.ID) })
	if vol.Host != r.ha.agent.HostID() || vol.Backend != structs.VolumeBackendRBD {
		t.Fatalf("volume on %s as %s, want A (%s) as rbd", vol.Host, vol.Backend, r.ha.agent.HostID())
	}
	return vol
}

// TestAgentAttachesAnRBDVolume: host A's storage agent keeps volumes in
// the real Ceph cluster (RBD backend); a volume made there attaches to a
// running instance on host B (a second libvirtd) as an RBD network disk
// through B's libvirt ceph secret, without any export from A. The data
// written into the image before reads through the attachment, data
// written through it is in the image after the detach, and deleting the
// volume removes the image.
func TestAgentAttachesAnRBDVolume(t *testing.T) {
	ceph := needCeph(t)
	r := startRBDHosts(t, ceph)
	c, hb, id, secret, lvb := r.c, r.hb, r.id, r.secret, r.lvb
	vol := r.rbdVolume(t, ceph)
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
