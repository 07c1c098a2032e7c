package libvirt_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
)

// TestAgentSwapsAVolumeOfAnotherHost: an instance on host B (a second
// libvirtd) uses a volume of host A through A's NBD export, and the
// volume is swapped for another volume of A while the guest runs (Nova's
// swap volume): B's driver block-copies the disk onto A's export of the
// new attachment, a network disk, and pivots to it. The data written to
// the old volume reads through the new attachment under the same guest
// device, data written through it lands in the new volume's file, the
// old volume's file is left as it was, and the old attachment's export
// is gone.
func TestAgentSwapsAVolumeOfAnotherHost(t *testing.T) {
	needNBDTools(t)
	c, hb, ha, _, peer, id, _ := nbdHosts(t)
	nbdAddr := ha.nbdAddr
	create := func(name string) *structs.Volume {
		var created structs.SingleVolumeResponse
		if err := c.rpc("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p1", Volume: &structs.Volume{Name: name, SizeGB: 1}}, &created); err != nil {
			t.Fatal(err)
		}
		v := c.waitVolume(created.Volume.ID, structs.VolumeAvailable)
		if v.Host != ha.agent.HostID() {
			t.Fatalf("volume %s on %s, want A (%s)", name, v.Host, ha.agent.HostID())
		}
		return v
	}
	oldVol, newVol := create("old"), create("new")
	qemutest.IO(t, oldVol.ProviderLocation, "write -P 0xab 0 64k")
	qemutest.IO(t, oldVol.ProviderLocation, "write -P 0x3c 900k 64k")

	c.task(id, structs.OpAttachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: oldVol.ID}
	})
	oldAtt := c.waitVolume(oldVol.ID, structs.VolumeInUse).AttachmentOf(id)
	lvb := rawConnTo(t, peer.URI)
	dom, err := lvb.DomainLookupByName(hb.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	oldAlias := nbdDiskAlias(t, lvb, dom, structs.VolumeExportName(oldVol.ID, oldAtt.ID), nbdAddr)
	writeThrough(t, lvb, dom, oldAlias, 0xcd, 64<<10)

	start := time.Now()
	c.task(id, structs.OpSwapVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: oldVol.ID, NewVolumeID: newVol.ID}
	})
	v := c.waitVolume(newVol.ID, structs.VolumeInUse)
	t.Logf("swapped onto the other export %v after the swap was asked", time.Since(start))
	if old := c.waitVolume(oldVol.ID, structs.VolumeAvailable); len(old.Attachments) != 0 {
		t.Fatalf("the old volume keeps attachments: %+v", old.Attachments)
	}
	att := v.AttachmentOf(id)
	if att == nil || att.Device != oldAtt.Device {
		t.Fatalf("the new volume's attachment %+v, want device %s", v.Attachments, oldAtt.Device)
	}
	alias := nbdDiskAlias(t, lvb, dom, structs.VolumeExportName(newVol.ID, att.ID), nbdAddr)
	if alias != oldAlias {
		t.Fatalf("the guest's device changed: %s, was %s", alias, oldAlias)
	}
	readThrough(t, lvb, dom, alias, 0xab, 0)
	readThrough(t, lvb, dom, alias, 0xcd, 64<<10)
	readThrough(t, lvb, dom, alias, 0x3c, 900<<10)
	writeThrough(t, lvb, dom, alias, 0xef, 128<<10)
	x, err := lvb.DomainGetXMLDesc(dom, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(x, structs.VolumeExportName(oldVol.ID, oldAtt.ID)) {
		t.Fatalf("the live domain still names the old export:\n%s", x)
	}

	c.task(id, structs.OpDetachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: newVol.ID}
	})
	c.waitVolume(newVol.ID, structs.VolumeAvailable)
	for _, cmd := range []string{"read -P 0xab 0 64k", "read -P 0xcd 64k 64k", "read -P 0xef 128k 64k", "read -P 0x3c 900k 64k"} {
		qemutest.IO(t, newVol.ProviderLocation, cmd)
	}
	// The old volume is as the copy found it: the write after the swap
	// went to the new one only.
	qemutest.IO(t, oldVol.ProviderLocation, "read -P 0xcd 64k 64k")
	qemutest.IO(t, oldVol.ProviderLocation, "read -P 0 128k 64k")
}
