package libvirt_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// TestAgentExtendsAnAttachedRBDVolume: a volume in the real Ceph
// cluster, attached to a running instance on another host (a second
// libvirtd), is extended in use (Cinder 3.42): the storage host grows
// the image with rbd resize and reports the volume in-use with its new
// size, then the instance's host grows the guest's disk with
// virDomainBlockResize. QEMU gives the guest the new size, the data
// written before reads through the attachment, the new end takes
// writes, and both are in the image after the detach.
func TestAgentExtendsAnAttachedRBDVolume(t *testing.T) {
	r := rbdHosts(t)
	c, id, ceph, lvb := r.c, r.id, r.ceph, rawConnTo(t, r.peer.URI)
	vol := r.volume(t, "data")
	spec := vol.ProviderLocation
	ceph.io(t, spec, "write -P 0xab 0 64k")

	c.task(id, structs.OpAttachVolume, func(q *structs.InstanceTaskRequest) {
		q.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	v := c.waitVolume(vol.ID, structs.VolumeInUse)
	c.waitStatus(id, "ACTIVE")
	att := v.AttachmentOf(id)
	if att == nil || att.Host != r.hb.agent.HostID() {
		t.Fatalf("attachment: %+v", v.Attachments)
	}
	dev := strings.TrimPrefix(att.Device, "/dev/")
	dom, err := lvb.DomainLookupByName(r.hb.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	c.extendAttached(vol.ID, 2)
	if v := c.waitVolume(vol.ID, structs.VolumeInUse); v.SizeGB != 2 || v.AttachmentOf(id) == nil {
		t.Fatalf("extended volume: %+v", v)
	}
	t.Logf("in-use again %v after the extend was asked", time.Since(start))
	waitUntil(t, 60*time.Second, "the guest's disk grown", func() error {
		if got := guestDiskSize(t, lvb, dom, dev); got != 2<<30 {
			return fmt.Errorf("QEMU gives the guest %d bytes", got)
		}
		return nil
	})
	t.Logf("guest disk of 2 GiB %v after the extend was asked", time.Since(start))
	alias := rbdDiskAlias(t, lvb, dom, spec, r.secret)
	readThrough(t, lvb, dom, alias, 0xab, 0)
	writeThrough(t, lvb, dom, alias, 0xcd, 2<<30-64<<10)

	c.task(id, structs.OpDetachVolume, func(q *structs.InstanceTaskRequest) {
		q.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	c.waitVolume(vol.ID, structs.VolumeAvailable)
	ceph.io(t, spec, "read -P 0xab 0 64k")
	ceph.io(t, spec, "read -P 0xcd 2147418112 64k")
}
