package libvirt_test

import (
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/structs"
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
	// B first, alone, so the instance lands on it.
	hb, peerB := cephPeer(t, c, ceph, attach, "hvb")
	id := c.boot("vm").ID
	rbdStorageHost(t, c, ceph, attach)
	hc, peerC := cephPeer(t, c, ceph, attach, "hvc")
	t.Logf("three hosts up, the instance ACTIVE on B, %v after the start", time.Since(began))

	vol := rbdVolume(t, c, ceph, "data")
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

	c.migrateRevertConfirm(t, id, hb, hc, lvb, lvc, vol.ID, att.ID, func(lv *golibvirt.Libvirt, dom golibvirt.Domain) string {
		return rbdDiskAlias(t, lv, dom, spec, secret)
	})

	c.task(id, structs.OpDetachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	c.waitVolume(vol.ID, structs.VolumeAvailable)
	ceph.io(t, spec, "read -P 0xab 0 64k")
	ceph.io(t, spec, "read -P 0xcd 64k 64k")
}
