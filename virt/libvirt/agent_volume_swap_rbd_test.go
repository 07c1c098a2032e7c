package libvirt_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// TestAgentSwapsAnRBDVolume: an instance on host B uses an RBD volume
// of the real Ceph cluster, which is swapped for another RBD volume
// while the guest runs: B's driver block-copies the disk onto the new
// image, given to libvirt as an RBD network disk with the cephx secret,
// and pivots to it. The data written to the old image reads through the
// new attachment under the same guest device, data written through it
// lands in the new image, and the old image is left as it was.
func TestAgentSwapsAnRBDVolume(t *testing.T) {
	r := rbdHosts(t)
	c, ceph, hb, id, secret := r.c, r.ceph, r.hb, r.id, r.secret
	oldVol, newVol := r.volume(t, "old"), r.volume(t, "new")
	ceph.io(t, oldVol.ProviderLocation, "write -P 0xab 0 64k")
	ceph.io(t, oldVol.ProviderLocation, "write -P 0x3c 900k 64k")

	c.task(id, structs.OpAttachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: oldVol.ID}
	})
	oldAtt := c.waitVolume(oldVol.ID, structs.VolumeInUse).AttachmentOf(id)
	lvb := rawConnTo(t, r.peer.URI)
	dom, err := lvb.DomainLookupByName(hb.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	oldAlias := rbdDiskAlias(t, lvb, dom, oldVol.ProviderLocation, secret)
	writeThrough(t, lvb, dom, oldAlias, 0xcd, 64<<10)

	start := time.Now()
	c.task(id, structs.OpSwapVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: oldVol.ID, NewVolumeID: newVol.ID}
	})
	v := c.waitVolume(newVol.ID, structs.VolumeInUse)
	t.Logf("swapped onto the other image %v after the swap was asked", time.Since(start))
	if old := c.waitVolume(oldVol.ID, structs.VolumeAvailable); len(old.Attachments) != 0 {
		t.Fatalf("the old volume keeps attachments: %+v", old.Attachments)
	}
	if att := v.AttachmentOf(id); att == nil || att.Device != oldAtt.Device {
		t.Fatalf("the new volume's attachment %+v, want device %s", v.Attachments, oldAtt.Device)
	}
	alias := rbdDiskAlias(t, lvb, dom, newVol.ProviderLocation, secret)
	if alias != oldAlias {
		t.Fatalf("the guest's device changed: %s, was %s", alias, oldAlias)
	}
	readThrough(t, lvb, dom, alias, 0xab, 0)
	readThrough(t, lvb, dom, alias, 0xcd, 64<<10)
	readThrough(t, lvb, dom, alias, 0x3c, 900<<10)
	writeThrough(t, lvb, dom, alias, 0xef, 128<<10)
	if x, _ := lvb.DomainGetXMLDesc(dom, 0); strings.Contains(x, "name='"+oldVol.ProviderLocation+"'") {
		t.Fatalf("the live domain still names the old image:\n%s", x)
	}

	c.task(id, structs.OpDetachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: newVol.ID}
	})
	c.waitVolume(newVol.ID, structs.VolumeAvailable)
	for _, cmd := range []string{"read -P 0xab 0 64k", "read -P 0xcd 64k 64k", "read -P 0xef 128k 64k", "read -P 0x3c 900k 64k"} {
		ceph.io(t, newVol.ProviderLocation, cmd)
	}
	ceph.io(t, oldVol.ProviderLocation, "read -P 0xcd 64k 64k")
	ceph.io(t, oldVol.ProviderLocation, "read -P 0 128k 64k")
}
