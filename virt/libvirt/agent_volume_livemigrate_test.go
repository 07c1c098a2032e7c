package libvirt_test

import (
	"fmt"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// TestAgentLiveMigrationKeepsAnNBDVolume: a running instance on host B
// (a peer libvirtd) with a volume of storage host A attached over NBD
// (A's export, TLS, B's own certificate) live-migrates to host C
// (another peer, its own certificate). What was written through B's
// QEMU before the move reads through C's after it, C writes more, and
// both are in the volume's file once it is detached. While the move
// runs the export admits both hosts; after it, C's certificate only:
// B's, valid and signed by the same CA, is refused.
func TestAgentLiveMigrationKeepsAnNBDVolume(t *testing.T) {
	needNBDTools(t)
	began := time.Now()
	// B is reached at its libvirtd's URI; the hosts share the machine's
	// file system, as addPeerHosts' do.
	c, hb, ha, _, peerB, id, hostCert := nbdHosts(t, func(cfg *libvirt.Config) {
		cfg.MigrationURI, cfg.SharedStorage = cfg.URI, true
	})
	peerC := libvirtpeer.Start(t)
	hostCert(peerC.NBDTLSDir, "hvc")
	cenv := *hb.env
	cenv.cfg.URI, cenv.cfg.MigrationURI, cenv.cfg.HostName = peerC.URI, peerC.URI, "hvc"
	cenv.raw = rawConnTo(t, peerC.URI)
	hc := &host{name: "hvc", env: &cenv, dataDir: t.TempDir(), syncEvery: time.Second}
	hc.drv = cenv.open()
	c.mu.Lock()
	c.hosts[hc.name] = hc
	c.mu.Unlock()
	c.startAgent(hc)
	t.Logf("three hosts up, the instance ACTIVE on B, %v after the start", time.Since(began))

	vol, att := c.attachNewVolume(t, id, ha)
	file := vol.ProviderLocation
	export := structs.VolumeExportName(vol.ID, att.ID)
	lvb, lvc := rawConnTo(t, peerB.URI), rawConnTo(t, peerC.URI)
	domB, err := lvb.DomainLookupByName(hb.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	c.waitFor("the volume readable on B", 2*time.Minute, func() error {
		return tryReadThrough(t, lvb, domB, nbdDiskAlias(t, lvb, domB, export, ha.nbdAddr), 0, 0)
	})
	writeThrough(t, lvb, domB, nbdDiskAlias(t, lvb, domB, export, ha.nbdAddr), 0xab, 0)
	// C has no attachment on A yet: its certificate is refused.
	nbdOpen := func(dir string) (string, bool) {
		return qemutest.Try(t, qemutest.NBDExport(ha.nbdAddr, export), qemutest.Opts{TLSDir: dir, ReadOnly: true}, "read 0 4k")
	}
	if out, ok := nbdOpen(peerC.NBDTLSDir); ok {
		t.Fatalf("C opened B's export before the move: %s", out)
	}

	start := time.Now()
	c.task(id, structs.OpLiveMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = hc.name })
	c.waitFor(id+" ACTIVE on C", statusWait, func() error {
		inst := c.waitStatus(id, "ACTIVE")
		if h := c.host(hc.name); h == nil || inst.HostID != h.ID {
			return fmt.Errorf("instance on %q, want hvc", inst.HostID)
		}
		return nil
	})
	t.Logf("live-migrated to C %v after it was asked", time.Since(start))
	if st := domainState(t, lvb, hb.drv.DomainName(id)); st != -1 {
		t.Fatalf("domain still on B in state %d", st)
	}
	v := c.waitVolume(vol.ID, structs.VolumeInUse)
	if a := v.AttachmentOf(id); a == nil || a.ID != att.ID || a.Host != hc.agent.HostID() {
		t.Fatalf("attachment after the move %+v, want %s on C", a, att.ID)
	}
	domC, err := lvc.DomainLookupByName(hc.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	if st, _, err := lvc.DomainGetState(domC, 0); err != nil || golibvirt.DomainState(st) != golibvirt.DomainRunning {
		t.Fatalf("domain on C in state %d: %v", st, err)
	}
	aliasC := nbdDiskAlias(t, lvc, domC, export, ha.nbdAddr)
	readThrough(t, lvc, domC, aliasC, 0xab, 0)
	writeThrough(t, lvc, domC, aliasC, 0xcd, 64<<10)
	readThrough(t, lvc, domC, aliasC, 0xcd, 64<<10)

	// The move is over: B's certificate is refused, C's admitted.
	c.waitFor("B refused by A's export", time.Minute, func() error {
		if out, ok := nbdOpen(peerB.NBDTLSDir); ok {
			return fmt.Errorf("B still opens the export: %s", out)
		}
		return nil
	})
	if out, ok := nbdOpen(peerC.NBDTLSDir); !ok {
		t.Fatalf("C refused: %s", out)
	}

	c.task(id, structs.OpDetachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	c.waitVolume(vol.ID, structs.VolumeAvailable)
	c.waitFor("the volume's file readable", 30*time.Second, func() error {
		if out, ok := qemutest.Try(t, file, qemutest.Opts{}, "read -P 0xab 0 64k", "read -P 0xcd 64k 64k"); !ok {
			return fmt.Errorf("%s", out)
		}
		return nil
	})
}
