package libvirt_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
)

// TestAgentBootsFromAVolumeOfAnotherHost: a server created on host B (a
// second libvirtd) from a volume kept on storage host A boots with the
// volume as its vda, A's NBD export of the attachment over TLS: the
// patterns written into the volume's file with qemu-io before are read
// through B's QEMU, and through host C's (a third libvirtd) after a cold
// migration and its confirmation, the root disk neither copied nor
// deleted. A rebuild at 2.93 reimages the volume through the export
// (C's agent, while the guest is destroyed): the new guest reads the
// image and zeros past it. Once the server is deleted the volume is
// available again with that data in its file. (A virtio-blk guest disk shares no
// write permission, so qemu-io cannot write beside the guest.)
func TestAgentBootsFromAVolumeOfAnotherHost(t *testing.T) {
	needNBDTools(t)
	began := time.Now()
	c, hb, peerB := peerHost(t, "hvb")
	ha, _, hostCert := nbdStorageHost(t, c, peerB, hb.name)
	// C can reimage the volume: the image in its cache, the agent's
	// client certificate for the export.
	imageFile := qcow2Image(t, "1M")
	qemutest.IO(t, imageFile, "write -P 0xee 0 64k")
	img := c.uploadImage(imageFile)
	hc, peerC := thirdPeer(t, c, hostCert, func(h *host, peer *libvirtpeer.Peer) {
		h.images = fileCache(t, filepath.Join(t.TempDir(), "cache-c"), imageFile)
		h.nbdTLS = &client.NBDClientTLS{CAFile: filepath.Join(peer.NBDTLSDir, "ca-cert.pem"),
			CertFile: filepath.Join(peer.NBDTLSDir, "client-cert.pem"), KeyFile: filepath.Join(peer.NBDTLSDir, "client-key.pem")}
	})
	t.Logf("three hosts up %v after the start", time.Since(began))

	var created structs.SingleVolumeResponse
	if err := c.rpc("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p1", Volume: &structs.Volume{Name: "root", SizeGB: 1}}, &created); err != nil {
		t.Fatal(err)
	}
	vol := c.waitVolume(created.Volume.ID, structs.VolumeAvailable)
	if vol.Host != ha.agent.HostID() {
		t.Fatalf("volume on %s, want A (%s)", vol.Host, ha.agent.HostID())
	}
	file := vol.ProviderLocation
	for k, p := range []byte{0xb1, 0xb2} {
		qemutest.IO(t, file, fmt.Sprintf("write -P 0x%02x %d 64k", p, k<<20))
	}

	start := time.Now()
	var out structs.InstanceCreateResponse
	if err := c.rpc("Instance.Create", &structs.InstanceCreateRequest{Name: "bfv", FlavorID: flavorTiny.ID, ProjectID: "p1", UserID: "u1",
		RequestID: "req-bfv", TargetHost: "hvb", BlockDevices: []*structs.BlockDevice{{VolumeID: vol.ID, BootIndex: 0}}}, &out); err != nil {
		t.Fatalf("create: %v", err)
	}
	id := out.Instances[0].ID
	inst := c.waitStatus(id, "ACTIVE")
	t.Logf("ACTIVE on B %v after the create", time.Since(start))
	if inst.HostID != hb.agent.HostID() {
		t.Fatalf("instance on %s, want B", inst.HostID)
	}
	att := c.waitVolume(vol.ID, structs.VolumeInUse).AttachmentOf(id)
	if att == nil || att.Device != "/dev/vda" || att.Host != hb.agent.HostID() || !att.Exported {
		t.Fatalf("root attachment: %+v", att)
	}
	export := structs.VolumeExportName(vol.ID, att.ID)
	lvb, lvc := rawConnTo(t, peerB.URI), rawConnTo(t, peerC.URI)
	domB, err := lvb.DomainLookupByName(hb.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	alias := nbdDiskAlias(t, lvb, domB, export, ha.nbdAddr)
	if x, err := lvb.DomainGetXMLDesc(domB, 0); err != nil || !strings.Contains(x, "<target dev='vda' bus='virtio'/>") ||
		strings.Index(x, "protocol='nbd' name='"+export+"'") > strings.Index(x, "<target dev='vda'") || strings.Contains(x, "<source file=") {
		t.Fatalf("the root disk is not vda as the export, or the domain has a disk file: %v\n%s", err, x)
	}
	for k, p := range []byte{0xb1, 0xb2} {
		if err := tryReadThrough(t, lvb, domB, alias, p, k<<20); err != nil {
			t.Fatalf("on B: %v", err)
		}
	}

	start = time.Now()
	c.task(id, structs.OpMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = hc.name })
	inst = c.waitStatus(id, "VERIFY_RESIZE")
	t.Logf("migrated to C %v after the migration was asked", time.Since(start))
	if inst.HostID != hc.agent.HostID() {
		t.Fatalf("migrated to %s, want C", inst.HostID)
	}
	domC, err := lvc.DomainLookupByName(hc.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	aliasC := nbdDiskAlias(t, lvc, domC, export, ha.nbdAddr)
	c.task(id, structs.OpConfirmResize)
	c.waitStatus(id, "ACTIVE")
	c.waitFor("B's copy gone", statusWait, func() error {
		if _, err := lvb.DomainLookupByName(hb.drv.DomainName(id)); err == nil {
			return fmt.Errorf("domain still on B")
		}
		return nil
	})
	for k, p := range []byte{0xb1, 0xb2} {
		if err := tryReadThrough(t, lvc, domC, aliasC, p, k<<20); err != nil {
			t.Fatalf("on C: %v", err)
		}
	}
	v := c.waitVolume(vol.ID, structs.VolumeInUse)
	if a := v.AttachmentOf(id); a == nil || a.ID != att.ID || a.Host != hc.agent.HostID() || a.MoveHost != "" {
		t.Fatalf("attachment after the confirm: %+v", a)
	}
	if rv := c.get(id).RootVolume(); rv == nil || rv.NBD == nil || rv.NBD.Name != export || rv.Path != "" {
		t.Fatalf("root volume after the move: %+v", rv)
	}

	// A rebuild that reimages the volume (Nova 2.93): C's agent rewrites
	// it through the export while the guest is destroyed; the new guest
	// reads the image, and nothing of the old data past it.
	start = time.Now()
	c.task(id, structs.OpRebuild, func(r *structs.InstanceTaskRequest) { r.ImageID, r.ReimageBootVolume = img.ID, true })
	c.waitStatus(id, "ACTIVE")
	t.Logf("reimaged and rebuilt %v after the rebuild was asked", time.Since(start))
	if v := c.waitVolume(vol.ID, structs.VolumeInUse); v.ImageID != img.ID {
		t.Fatalf("volume after the reimage shows image %q", v.ImageID)
	}
	domC, err = lvc.DomainLookupByName(hc.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	aliasC = nbdDiskAlias(t, lvc, domC, export, ha.nbdAddr)
	for k, p := range []byte{0xee, 0x00} {
		if err := tryReadThrough(t, lvc, domC, aliasC, p, k<<20); err != nil {
			t.Fatalf("after the reimage: %v", err)
		}
	}

	if err := c.rpc("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{id}, ProjectID: "p1", UserID: "u1", Admin: true, Force: true},
		&structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	c.waitVolume(vol.ID, structs.VolumeAvailable)
	c.waitFor("the volume's file readable with the patterns", 30*time.Second, func() error {
		for k, p := range []byte{0xee, 0x00} {
			cmd := fmt.Sprintf("read -P 0x%02x %d 64k", p, k<<20)
			if out, ok := qemutest.Try(t, file, qemutest.Opts{}, cmd); !ok {
				return fmt.Errorf("%s: %s", cmd, out)
			}
		}
		return nil
	})
}
