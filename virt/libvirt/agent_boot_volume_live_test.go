package libvirt_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// TestAgentLiveMigratesAnRBDBootedServer: a server booted from an RBD
// volume, with no disk of its own, live-migrates between two real
// libvirtds that share no storage (the machine's own, also the RBD
// storage host, and a peer): the root volume is shared storage, so
// libvirt copies no disk, and the destination's QEMU reads through the
// same RBD image what was written into it before.
func TestAgentLiveMigratesAnRBDBootedServer(t *testing.T) {
	ceph := needCeph(t)
	c := newCloud(t)
	secret := uuid.NewString()
	attach := &client.CephAttach{MonHosts: []string{ceph.mon}, User: "cinder", SecretUUID: secret, Keyring: ceph.keyring}
	peer := libvirtpeer.Start(t)
	a := &host{name: "hv-a", dataDir: t.TempDir(), syncEvery: time.Second, storageGB: 20, backend: structs.VolumeBackendRBD, ceph: attach,
		env: newEnv(t, func(cfg *libvirt.Config) { cfg.HostName, cfg.MigrationURI = "hv-a", peer.HostURI })}
	a.drv = a.env.drv
	benv := *a.env
	benv.cfg.URI, benv.cfg.MigrationURI, benv.cfg.HostName = peer.URI, peer.URI, "hv-b"
	benv.raw = rawConnTo(t, peer.URI)
	b := &host{name: "hv-b", dataDir: t.TempDir(), syncEvery: time.Second, ceph: attach, env: &benv}
	b.drv = benv.open()
	for _, h := range []*host{a, b} {
		addCephHost(t, c, h, ceph, secret)
	}
	runRBDStorage(t, c, a, ceph)
	vol := rbdVolume(t, c, ceph, "root")
	spec := vol.ProviderLocation
	ceph.io(t, spec, "write -P 0xa5 0 64k")

	var out structs.InstanceCreateResponse
	if err := c.rpc("Instance.Create", &structs.InstanceCreateRequest{Name: "bfv-live", FlavorID: flavorTiny.ID, ProjectID: "p1", UserID: "u1",
		RequestID: "req-bfv-live", TargetHost: "hv-a", BlockDevices: []*structs.BlockDevice{{VolumeID: vol.ID, BootIndex: 0}}}, &out); err != nil {
		t.Fatalf("create: %v", err)
	}
	id := out.Instances[0].ID
	c.waitStatus(id, "ACTIVE")
	dom, err := a.env.raw.DomainLookupByName(a.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	if err := tryReadThrough(t, a.env.raw, dom, rbdDiskAlias(t, a.env.raw, dom, spec, secret), 0xa5, 0); err != nil {
		t.Fatalf("on A: %v", err)
	}

	start := time.Now()
	c.task(id, structs.OpLiveMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = "hv-b" })
	c.waitFor(id+" on hv-b", statusWait, func() error {
		inst := c.waitStatus(id, "ACTIVE")
		if inst.HostID != b.agent.HostID() {
			return fmt.Errorf("instance on host %q, want hv-b", inst.HostID)
		}
		return nil
	})
	t.Logf("live-migrated %v after the migration was asked", time.Since(start))
	expectDomain(t, b, id, golibvirt.DomainRunning)
	if st := domainState(t, a.env.raw, a.drv.DomainName(id)); st != -1 {
		t.Fatalf("domain still on A in state %d", st)
	}
	domB, err := b.env.raw.DomainLookupByName(b.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	aliasB := rbdDiskAlias(t, b.env.raw, domB, spec, secret)
	if x, _ := b.env.raw.DomainGetXMLDesc(domB, 0); aliasB != "virtio-disk0" || strings.Contains(x, "<source file=") {
		t.Fatalf("on B the root disk is %s, or the domain has a disk file:\n%s", aliasB, x)
	}
	if err := tryReadThrough(t, b.env.raw, domB, aliasB, 0xa5, 0); err != nil {
		t.Fatalf("on B: %v", err)
	}
	if att := c.waitVolume(vol.ID, structs.VolumeInUse).AttachmentOf(id); att == nil || att.Host != b.agent.HostID() || att.MoveHost != "" {
		t.Fatalf("attachment after the live migration: %+v", att)
	}
	if err := c.rpc("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{id}, ProjectID: "p1", UserID: "u1", Admin: true, Force: true},
		&structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	c.waitVolume(vol.ID, structs.VolumeAvailable)
	ceph.io(t, spec, "read -P 0xa5 0 64k")
}
