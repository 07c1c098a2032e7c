package libvirt_test

import (
	"context"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/storage"
	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// addCephHost defines the libvirt ceph secret on h's libvirtd (removed
// when the test ends), adds h to c and starts its agent.
func addCephHost(t *testing.T, c *cloud, h *host, ceph *cephCluster, secret string) {
	t.Helper()
	if err := h.drv.DefineCephSecret(ctx(t), secret, "cinder", ceph.key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.drv.UndefineSecret(context.Background(), secret) })
	c.mu.Lock()
	c.hosts[h.name] = h
	c.mu.Unlock()
	c.startAgent(h)
}

// runRBDStorage runs, until the test ends, the storage agent of h (a
// storage host on the RBD backend) against the test Ceph cluster.
func runRBDStorage(t *testing.T, c *cloud, h *host, ceph *cephCluster) {
	t.Helper()
	sa, err := storage.New(storage.Config{HostID: h.agent.HostID(), NodeSecret: h.agent.NodeSecret(), RPC: c.srv,
		Backend: ceph.rbd, Logger: testLogger(t, "storage"), MaxQueryTime: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	saCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); sa.Run(saCtx) }()
	t.Cleanup(func() { stop(); <-done })
}

// rbdVolume creates a 1 GB volume of project p1 in the cloud's RBD
// storage host and waits until it is available; the test's end deletes
// its image.
func rbdVolume(t *testing.T, c *cloud, ceph *cephCluster, name string) *structs.Volume {
	t.Helper()
	var created structs.SingleVolumeResponse
	if err := c.rpc("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p1", Volume: &structs.Volume{Name: name, SizeGB: 1}}, &created); err != nil {
		t.Fatal(err)
	}
	vol := c.waitVolume(created.Volume.ID, structs.VolumeAvailable)
	t.Cleanup(func() { _ = ceph.rbd.DeleteVolume(context.Background(), vol.ID) })
	if vol.Backend != structs.VolumeBackendRBD {
		t.Fatalf("volume %s kept as %s, want rbd", name, vol.Backend)
	}
	return vol
}

// rbdStorageHost adds to c the host hva on the machine's libvirtd, a
// storage host on the RBD backend whose storage agent runs until the
// test ends.
func rbdStorageHost(t *testing.T, c *cloud, ceph *cephCluster, attach *client.CephAttach) *host {
	t.Helper()
	ha := &host{name: "hva", env: newEnv(t, func(cfg *libvirt.Config) { cfg.HostName = "hva" }),
		dataDir: t.TempDir(), syncEvery: time.Second, storageGB: 20, backend: structs.VolumeBackendRBD, ceph: attach}
	ha.drv = ha.env.drv
	c.mu.Lock()
	c.hosts[ha.name] = ha
	c.mu.Unlock()
	c.startAgent(ha)
	runRBDStorage(t, c, ha, ceph)
	return ha
}

// cephPeer adds to c the host name on a libvirtd of its own with the
// libvirt ceph secret of attach; tweak adjusts the host before its
// agent starts.
func cephPeer(t *testing.T, c *cloud, ceph *cephCluster, attach *client.CephAttach, name string, tweak ...func(*host)) (*host, *libvirtpeer.Peer) {
	t.Helper()
	peer := libvirtpeer.Start(t)
	h := &host{name: name, env: newEnv(t, func(cfg *libvirt.Config) { cfg.HostName, cfg.URI = name, peer.URI }),
		dataDir: t.TempDir(), syncEvery: time.Second, ceph: attach}
	h.drv = h.env.drv
	for _, f := range tweak {
		f(h)
	}
	addCephHost(t, c, h, ceph, attach.SecretUUID)
	return h, peer
}
