package libvirt_test

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/stratus-cloud/stratus/client/storage"
	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// nbdHosts is a cloud of two hosts, B (a second libvirtd) running an
// ACTIVE instance id, and A, a storage host whose storage agent (sa)
// serves NBD with TLS at A's nbdAddr, with B's own certificate in its
// nbd_tls_x509_cert_dir (peer.NBDTLSDir); hostCert issues another
// host's. tweaks adjust B's driver config.
func nbdHosts(t *testing.T, tweaks ...func(*libvirt.Config)) (c *cloud, hb, ha *host, sa *storageAgent, peer *libvirtpeer.Peer, id string, hostCert func(dir, host string)) {
	t.Helper()
	c, hb, peer = peerHost(t, "hvb", tweaks...)
	id = c.boot("vm").ID
	ha, sa, hostCert = nbdStorageHost(t, c, peer, hb.name)
	return c, hb, ha, sa, peer, id, hostCert
}

// peerHost is a cloud with one host, name, on a second libvirtd;
// tweaks adjust its driver config.
func peerHost(t *testing.T, name string, tweaks ...func(*libvirt.Config)) (c *cloud, h *host, peer *libvirtpeer.Peer) {
	t.Helper()
	c = newCloud(t)
	peer = libvirtpeer.Start(t)
	h = &host{name: name, env: newEnv(t, func(cfg *libvirt.Config) {
		cfg.HostName, cfg.URI = name, peer.URI
		for _, f := range tweaks {
			f(cfg)
		}
	}),
		dataDir: t.TempDir(), syncEvery: time.Second}
	h.drv = h.env.drv
	c.mu.Lock()
	c.hosts[h.name] = h
	c.mu.Unlock()
	c.startAgent(h)
	return c, h, peer
}

// nbdStorageHost adds to c the host A, a storage host whose storage
// agent serves NBD with TLS at A's nbdAddr, and puts the certificate of
// the host peerHost (on peer) in peer's nbd_tls_x509_cert_dir; hostCert
// issues another host's.
func nbdStorageHost(t *testing.T, c *cloud, peer *libvirtpeer.Peer, peerHost string) (ha *host, sa *storageAgent, hostCert func(dir, host string)) {
	t.Helper()
	caFile, certFile, keyFile, hostCert := nbdCerts(t, peer.NBDTLSDir, peerHost)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nbdAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	l.Close()
	ha = &host{name: "hva", env: newEnv(t, func(cfg *libvirt.Config) { cfg.HostName = "hva" }),
		dataDir: t.TempDir(), syncEvery: time.Second, storageGB: 20, nbdAddr: nbdAddr}
	ha.drv = ha.env.drv
	c.mu.Lock()
	c.hosts[ha.name] = ha
	c.mu.Unlock()
	c.startAgent(ha)
	pool, err := storage.NewFilePool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sa = &storageAgent{c: c, h: ha, pool: pool, cfg: storage.NBDConfig{StateDir: t.TempDir(), Address: nbdAddr,
		CAFile: caFile, CertFile: certFile, KeyFile: keyFile, Logger: testLogger(t, "nbd")}}
	sa.start()
	t.Cleanup(func() {
		sa.stop()
		if err := sa.exp.Stop(); err != nil {
			t.Error(err)
		}
	})
	return ha, sa, hostCert
}

// thirdPeer adds to c the host C on a third libvirtd, with its own
// certificate (from hostCert) for QEMU's NBD client; tweak, when given,
// adjusts C (on peerC) before its agent starts.
func thirdPeer(t *testing.T, c *cloud, hostCert func(dir, host string), tweak ...func(hc *host, peerC *libvirtpeer.Peer)) (hc *host, peerC *libvirtpeer.Peer) {
	t.Helper()
	peerC = libvirtpeer.Start(t)
	hostCert(peerC.NBDTLSDir, "hvc")
	hc = &host{name: "hvc", env: newEnv(t, func(cfg *libvirt.Config) { cfg.HostName, cfg.URI = "hvc", peerC.URI }),
		dataDir: t.TempDir(), syncEvery: time.Second}
	hc.drv = hc.env.drv
	for _, f := range tweak {
		f(hc, peerC)
	}
	c.mu.Lock()
	c.hosts[hc.name] = hc
	c.mu.Unlock()
	c.startAgent(hc)
	return hc, peerC
}

// volumeFollows waits until instance id shows status on h with
// attachment attID of volume volID there, then reads patterns (the k-th
// at k×64 KiB) through the guest's disk that alias names in h's domain
// on lv, as h's QEMU sees it.
func (c *cloud) volumeFollows(t *testing.T, id, status string, h *host, lv *golibvirt.Libvirt, volID, attID string,
	alias func(golibvirt.Domain) string, patterns ...byte) {
	t.Helper()
	c.waitFor(id+" "+status+" on "+h.name, statusWait, func() error {
		inst := c.waitStatus(id, status)
		if hst := c.host(h.name); hst == nil || inst.HostID != hst.ID {
			return fmt.Errorf("instance on %q, want %s", inst.HostID, h.name)
		}
		return nil
	})
	v := c.waitVolume(volID, structs.VolumeInUse)
	if a := v.AttachmentOf(id); a == nil || a.ID != attID || a.Host != h.agent.HostID() {
		t.Fatalf("%s on %s: attachment %+v", status, h.name, a)
	}
	dom, err := lv.DomainLookupByName(h.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	name := alias(dom)
	for k, p := range patterns {
		c.waitFor("the volume readable on "+h.name, 2*time.Minute, func() error {
			return tryReadThrough(t, lv, dom, name, p, k<<16)
		})
	}
}

// attachNewVolume creates a 1 GB volume, which must be placed on
// storage host h, and attaches it to instance id; it returns the volume
// as it was before the attach and its attachment once in-use.
func (c *cloud) attachNewVolume(t *testing.T, id string, h *host) (*structs.Volume, *structs.VolumeAttachment) {
	t.Helper()
	var created structs.SingleVolumeResponse
	if err := c.rpc("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p1", Volume: &structs.Volume{Name: "data", SizeGB: 1}}, &created); err != nil {
		t.Fatal(err)
	}
	vol := c.waitVolume(created.Volume.ID, structs.VolumeAvailable)
	if vol.Host != h.agent.HostID() {
		t.Fatalf("volume on %s, want %s (%s)", vol.Host, h.name, h.agent.HostID())
	}
	c.task(id, structs.OpAttachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	return vol, c.waitVolume(vol.ID, structs.VolumeInUse).AttachmentOf(id)
}

// migrateRevertConfirm cold-migrates instance id, whose volume volID
// (attachment attID) holds 0xab at 0, from host hb to hc, writes 0xcd at
// 64 KiB through hc's QEMU, reverts to hb, migrates to hc again and
// confirms. After each step the instance must be on the host it then
// runs on, with the attachment, and that host's QEMU must read every
// pattern written so far through the volume's disk (alias names it in
// a domain of the host's libvirtd).
func (c *cloud) migrateRevertConfirm(t *testing.T, id string, hb, hc *host, lvb, lvc *golibvirt.Libvirt, volID, attID string,
	alias func(lv *golibvirt.Libvirt, dom golibvirt.Domain) string) {
	t.Helper()
	where := func(status string, h *host, patterns ...byte) {
		t.Helper()
		lv := lvb
		if h == hc {
			lv = lvc
		}
		c.volumeFollows(t, id, status, h, lv, volID, attID, func(dom golibvirt.Domain) string { return alias(lv, dom) }, patterns...)
	}
	start := time.Now()
	c.task(id, structs.OpMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = hc.name })
	where("VERIFY_RESIZE", hc, 0xab)
	t.Logf("migrated to C %v after the migration was asked", time.Since(start))
	domC, err := lvc.DomainLookupByName(hc.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	writeThrough(t, lvc, domC, alias(lvc, domC), 0xcd, 64<<10)

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
}

// TestAgentColdMigrationKeepsAVolume: an instance on host B with a
// volume of storage host A attached (A's NBD export, with TLS) migrates
// cold to host C (a third libvirtd), is reverted to B, migrates to C
// again and is confirmed. At every step the instance's QEMU reads what
// was written through the volume before, on the host it then runs on,
// and the data written through the attachment on B and C is in the
// volume's file once it is detached: the move neither copies nor
// deletes the volume, and the source's teardown leaves it alone.
func TestAgentColdMigrationKeepsAVolume(t *testing.T) {
	needNBDTools(t)
	began := time.Now()
	c, hb, ha, _, peerB, id, hostCert := nbdHosts(t)
	// C, a third libvirtd, with its own certificate for QEMU's client.
	hc, peerC := thirdPeer(t, c, hostCert)
	t.Logf("three hosts up, the instance ACTIVE on B, %v after the start", time.Since(began))

	vol, att := c.attachNewVolume(t, id, ha)
	file := vol.ProviderLocation
	export := structs.VolumeExportName(vol.ID, att.ID)
	lvb, lvc := rawConnTo(t, peerB.URI), rawConnTo(t, peerC.URI)
	domB, err := lvb.DomainLookupByName(hb.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	writeThrough(t, lvb, domB, nbdDiskAlias(t, lvb, domB, export, ha.nbdAddr), 0xab, 0)

	c.migrateRevertConfirm(t, id, hb, hc, lvb, lvc, vol.ID, att.ID, func(lv *golibvirt.Libvirt, dom golibvirt.Domain) string {
		return nbdDiskAlias(t, lv, dom, export, ha.nbdAddr)
	})

	c.task(id, structs.OpDetachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	c.waitVolume(vol.ID, structs.VolumeAvailable)
	// The export's daemon lets go of the file once it has no export.
	c.waitFor("the volume's file readable", 30*time.Second, func() error {
		if out, ok := qemutest.Try(t, file, qemutest.Opts{}, "read -P 0xab 0 64k", "read -P 0xcd 64k 64k"); !ok {
			return fmt.Errorf("%s", out)
		}
		return nil
	})
}
