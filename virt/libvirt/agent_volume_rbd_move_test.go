package libvirt_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/storage"
	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// TestAgentColdMigrationKeepsAnRBDVolume: an instance on host B (a
// second libvirtd) with a volume of an RBD storage host A attached
// migrates cold to host C (a third libvirtd), is reverted to B, migrates
// to C again and is confirmed. At every step the QEMU of the host it
// runs on reads through the RBD disk what was written before, through
// that host's own libvirt ceph secret; after the detach the image holds
// both hosts' writes: the move neither copies nor deletes the image.
func TestAgentColdMigrationKeepsAnRBDVolume(t *testing.T) {
	ceph := needCeph(t)
	began := time.Now()
	c := newCloud(t)
	secret := uuid.NewString()
	attach := &client.CephAttach{MonHosts: []string{ceph.mon}, User: "cinder", SecretUUID: secret}
	peerB, peerC := libvirtpeer.Start(t), libvirtpeer.Start(t)
	hypervisor := func(name, uri string) *host {
		h := &host{name: name, env: newEnv(t, func(cfg *libvirt.Config) { cfg.HostName, cfg.URI = name, uri }),
			dataDir: t.TempDir(), syncEvery: time.Second, ceph: attach}
		h.drv = h.env.drv
		if err := h.drv.DefineCephSecret(ctx(t), secret, "cinder", ceph.key); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.drv.UndefineSecret(context.Background(), secret) })
		c.mu.Lock()
		c.hosts[name] = h
		c.mu.Unlock()
		c.startAgent(h)
		return h
	}
	// B first, alone, so the instance lands on it.
	hb := hypervisor("hvb", peerB.URI)
	id := c.boot("vm").ID

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
	hc := hypervisor("hvc", peerC.URI)
	t.Logf("three hosts up, the instance ACTIVE on B, %v after the start", time.Since(began))

	var created structs.SingleVolumeResponse
	if err := c.rpc("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p1", Volume: &structs.Volume{Name: "data", SizeGB: 1}}, &created); err != nil {
		t.Fatal(err)
	}
	vol := c.waitVolume(created.Volume.ID, structs.VolumeAvailable)
	t.Cleanup(func() { _ = ceph.rbd.DeleteVolume(context.Background(), vol.ID) })
	if vol.Backend != structs.VolumeBackendRBD {
		t.Fatalf("volume kept as %s, want rbd", vol.Backend)
	}
	spec := vol.ProviderLocation
	c.task(id, structs.OpAttachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	att := c.waitVolume(vol.ID, structs.VolumeInUse).AttachmentOf(id)
	lvb, lvc := rawConnTo(t, peerB.URI), rawConnTo(t, peerC.URI)
	domB, err := lvb.DomainLookupByName(hb.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	writeThrough(t, lvb, domB, rbdDiskAlias(t, lvb, domB, spec, secret), 0xab, 0)

	// where waits until the instance shows status on h with its
	// attachment there, and reads through the RBD disk as h's QEMU
	// sees it.
	where := func(status string, h *host, patterns ...byte) {
		t.Helper()
		c.waitFor(id+" "+status+" on "+h.name, statusWait, func() error {
			inst := c.waitStatus(id, status)
			if hst := c.host(h.name); hst == nil || inst.HostID != hst.ID {
				return fmt.Errorf("instance on %q, want %s", inst.HostID, h.name)
			}
			return nil
		})
		v := c.waitVolume(vol.ID, structs.VolumeInUse)
		if a := v.AttachmentOf(id); a == nil || a.ID != att.ID || a.Host != h.agent.HostID() {
			t.Fatalf("%s on %s: attachment %+v", status, h.name, a)
		}
		lv := lvb
		if h == hc {
			lv = lvc
		}
		dom, err := lv.DomainLookupByName(h.drv.DomainName(id))
		if err != nil {
			t.Fatal(err)
		}
		alias := rbdDiskAlias(t, lv, dom, spec, secret)
		for k, p := range patterns {
			c.waitFor("the volume readable on "+h.name, time.Minute, func() error {
				return tryReadThrough(t, lv, dom, alias, p, k<<16)
			})
		}
	}
	start := time.Now()
	c.task(id, structs.OpMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = hc.name })
	where("VERIFY_RESIZE", hc, 0xab)
	t.Logf("migrated to C %v after the migration was asked", time.Since(start))
	domC, err := lvc.DomainLookupByName(hc.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	writeThrough(t, lvc, domC, rbdDiskAlias(t, lvc, domC, spec, secret), 0xcd, 64<<10)

	c.task(id, structs.OpRevertResize)
	where("ACTIVE", hb, 0xab, 0xcd)
	t.Logf("reverted to B %v after the migration was asked", time.Since(start))

	c.task(id, structs.OpMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = hc.name })
	where("VERIFY_RESIZE", hc, 0xab, 0xcd)
	c.task(id, structs.OpConfirmResize)
	c.waitFor("B's copy gone", statusWait, func() error {
		if _, err := lvb.DomainLookupByName(hb.drv.DomainName(id)); err == nil {
			return fmt.Errorf("domain still on B")
		}
		return nil
	})
	where("ACTIVE", hc, 0xab, 0xcd)
	t.Logf("confirmed on C %v after the migration was asked", time.Since(start))

	c.task(id, structs.OpDetachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	c.waitVolume(vol.ID, structs.VolumeAvailable)
	ceph.io(t, spec, "read -P 0xab 0 64k")
	ceph.io(t, spec, "read -P 0xcd 64k 64k")
}
