package libvirt_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
)

// TestAgentBootsFromAnRBDVolume: a server created on host B (a second
// libvirtd) from a volume that host A's storage agent keeps in the real
// Ceph cluster boots with the RBD image as its vda (cephx user and
// libvirt secret, no key in the domain); the pattern written into the
// image before is read through B's QEMU, and through host C's (a third
// libvirtd) after a cold migration and its confirmation; a rebuild at
// 2.93 reimages it through Ceph (C's agent, with the host's keyring);
// deleting the server leaves the volume available with its data.
func TestAgentBootsFromAnRBDVolume(t *testing.T) {
	ceph := needCeph(t)
	began := time.Now()
	c := newCloud(t)
	secret := uuid.NewString()
	attach := &client.CephAttach{MonHosts: []string{ceph.mon}, User: "cinder", SecretUUID: secret, Keyring: ceph.keyring}
	imageFile := qcow2Image(t, "1M")
	qemutest.IO(t, imageFile, "write -P 0xee 0 64k")
	img := c.uploadImage(imageFile)
	peers := map[string]*libvirtpeer.Peer{}
	hosts := map[string]*host{}
	for _, name := range []string{"hvb", "hvc"} {
		hosts[name], peers[name] = cephPeer(t, c, ceph, attach, name, func(h *host) {
			h.images = fileCache(t, filepath.Join(t.TempDir(), "cache"), imageFile)
		})
	}
	ha := rbdStorageHost(t, c, ceph, attach)
	t.Logf("three hosts up %v after the start", time.Since(began))

	vol := rbdVolume(t, c, ceph, "root")
	if vol.Host != ha.agent.HostID() || vol.Backend != structs.VolumeBackendRBD {
		t.Fatalf("volume on %s as %s, want A (%s) as rbd", vol.Host, vol.Backend, ha.agent.HostID())
	}
	spec := vol.ProviderLocation
	ceph.io(t, spec, "write -P 0xab 0 64k")
	ceph.io(t, spec, "write -P 0xcd 1M 64k")

	start := time.Now()
	var out structs.InstanceCreateResponse
	if err := c.rpc("Instance.Create", &structs.InstanceCreateRequest{Name: "bfv", FlavorID: flavorTiny.ID, ProjectID: "p1", UserID: "u1",
		RequestID: "req-bfv", TargetHost: "hvb", BlockDevices: []*structs.BlockDevice{{VolumeID: vol.ID, BootIndex: 0}}}, &out); err != nil {
		t.Fatalf("create: %v", err)
	}
	id := out.Instances[0].ID
	c.waitStatus(id, "ACTIVE")
	t.Logf("ACTIVE on B %v after the create", time.Since(start))
	if rv := c.get(id).RootVolume(); rv == nil || rv.RBD != spec || rv.Path != "" || rv.NBD != nil {
		t.Fatalf("root volume: %+v", rv)
	}
	// reads checks the root disk of the instance's domain on host name:
	// vda as the RBD image, and the patterns through its QEMU.
	want := []byte{0xab, 0xcd}
	reads := func(name string) {
		t.Helper()
		lv := rawConnTo(t, peers[name].URI)
		dom, err := lv.DomainLookupByName(hosts[name].drv.DomainName(id))
		if err != nil {
			t.Fatal(err)
		}
		alias := rbdDiskAlias(t, lv, dom, spec, secret)
		x, err := lv.DomainGetXMLDesc(dom, 0)
		if err != nil || alias != "virtio-disk0" || strings.Contains(x, ceph.key) || strings.Contains(x, "<source file=") {
			t.Fatalf("on %s the root disk is %s (want virtio-disk0, no key, no disk file): %v\n%s", name, alias, err, x)
		}
		for k, p := range want {
			if err := tryReadThrough(t, lv, dom, alias, p, k<<20); err != nil {
				t.Fatalf("on %s: %v", name, err)
			}
		}
	}
	reads("hvb")

	start = time.Now()
	c.task(id, structs.OpMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = "hvc" })
	inst := c.waitStatus(id, "VERIFY_RESIZE")
	t.Logf("migrated to C %v after the migration was asked", time.Since(start))
	if inst.HostID != hosts["hvc"].agent.HostID() {
		t.Fatalf("migrated to %s, want C", inst.HostID)
	}
	c.task(id, structs.OpConfirmResize)
	c.waitStatus(id, "ACTIVE")
	reads("hvc")
	if a := c.waitVolume(vol.ID, structs.VolumeInUse).AttachmentOf(id); a == nil || a.Host != hosts["hvc"].agent.HostID() || a.MoveHost != "" {
		t.Fatalf("attachment after the confirm: %+v", a)
	}

	// A rebuild that reimages the volume (Nova 2.93): C's agent writes
	// the image into the RBD image through Ceph while the guest is
	// destroyed, and zeros the rest.
	start = time.Now()
	c.task(id, structs.OpRebuild, func(r *structs.InstanceTaskRequest) { r.ImageID, r.ReimageBootVolume = img.ID, true })
	c.waitStatus(id, "ACTIVE")
	t.Logf("reimaged and rebuilt %v after the rebuild was asked", time.Since(start))
	want = []byte{0xee, 0x00}
	reads("hvc")

	if err := c.rpc("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{id}, ProjectID: "p1", UserID: "u1", Admin: true, Force: true},
		&structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	c.waitVolume(vol.ID, structs.VolumeAvailable)
	ceph.io(t, spec, "read -P 0xee 0 64k")
	ceph.io(t, spec, fmt.Sprintf("read -P 0 %d 64k", 1<<20))
}
