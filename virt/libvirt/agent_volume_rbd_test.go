package libvirt_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/storage"
	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/structs"
)

// TestAgentAttachesAnRBDVolume: host A's storage agent keeps volumes in
// the real Ceph cluster (RBD backend); a volume made there attaches to a
// running instance on host B (a second libvirtd) as an RBD network disk
// through B's libvirt ceph secret, without any export from A. The data
// written into the image before reads through the attachment, data
// written through it is in the image after the detach, and deleting the
// volume removes the image.
func TestAgentAttachesAnRBDVolume(t *testing.T) {
	began := time.Now()
	r := rbdHosts(t)
	c, ceph, hb, id, secret := r.c, r.ceph, r.hb, r.id, r.secret
	t.Logf("instance ACTIVE on B, A's storage agent up %v after the start", time.Since(began))
	vol := r.volume(t, "data")
	spec := vol.ProviderLocation
	ceph.io(t, spec, "write -P 0xab 0 64k")

	start := time.Now()
	c.task(id, structs.OpAttachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	v := c.waitVolume(vol.ID, structs.VolumeInUse)
	t.Logf("in-use %v after the attach was asked", time.Since(start))
	if att := v.AttachmentOf(id); att == nil || att.Host != hb.agent.HostID() {
		t.Fatalf("attachment: %+v", v.Attachments)
	}
	lvb := rawConnTo(t, r.peer.URI)
	dom, err := lvb.DomainLookupByName(hb.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	alias := rbdDiskAlias(t, lvb, dom, spec, secret)
	readThrough(t, lvb, dom, alias, 0xab, 0)
	writeThrough(t, lvb, dom, alias, 0xcd, 64<<10)

	c.task(id, structs.OpDetachVolume, func(r *structs.InstanceTaskRequest) {
		r.Volume = &structs.VolumeAttachRequest{VolumeID: vol.ID}
	})
	if v := c.waitVolume(vol.ID, structs.VolumeAvailable); len(v.Attachments) != 0 {
		t.Fatalf("attachments after the detach: %+v", v.Attachments)
	}
	if x, _ := lvb.DomainGetXMLDesc(dom, 0); strings.Contains(x, "protocol='rbd'") {
		t.Fatalf("RBD disk still in B's domain after the detach:\n%s", x)
	}
	ceph.io(t, spec, "read -P 0xab 0 64k")
	ceph.io(t, spec, "read -P 0xcd 64k 64k")
	t.Logf("detached, data intact, %v after the attach was asked", time.Since(start))

	if err := c.rpc("Volume.Delete", &structs.VolumeDeleteRequest{VolumeID: vol.ID, ProjectID: "p1"}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "the image deleted", func() error {
		out, err := exec.Command("rbd", "-c", ceph.conf, "--id", "cinder", "ls", "volumes").Output()
		if err != nil {
			return err
		}
		if strings.Contains(string(out), storage.RBDVolumeImage(vol.ID)) {
			return errors.New("the volume's image is still in the pool")
		}
		return nil
	})
}

// rbdCloud is an instance on host B (a second libvirtd with the libvirt
// ceph secret) and host A, a storage host whose storage agent keeps
// volumes in the test Ceph cluster.
type rbdCloud struct {
	c      *cloud
	ceph   *cephCluster
	hb, ha *host
	peer   *libvirtpeer.Peer
	id     string
	secret string
}

// rbdHosts starts an rbdCloud with its instance ACTIVE on B.
func rbdHosts(t *testing.T) *rbdCloud {
	t.Helper()
	r := &rbdCloud{ceph: needCeph(t), c: newCloud(t), secret: uuid.NewString()}
	attach := &client.CephAttach{MonHosts: []string{r.ceph.mon}, User: "cinder", SecretUUID: r.secret}
	r.hb, r.peer = cephPeer(t, r.c, r.ceph, attach, "hvb")
	r.id = r.c.boot("vm").ID
	r.ha = rbdStorageHost(t, r.c, r.ceph, attach)
	return r
}

// volume creates a 1 GB volume in A's pool and waits until it is
// available; the test's end deletes its image.
func (r *rbdCloud) volume(t *testing.T, name string) *structs.Volume {
	t.Helper()
	vol := rbdVolume(t, r.c, r.ceph, name)
	if vol.Host != r.ha.agent.HostID() {
		t.Fatalf("volume on %s, want A (%s)", vol.Host, r.ha.agent.HostID())
	}
	return vol
}
