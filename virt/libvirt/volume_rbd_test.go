package libvirt_test

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/client/storage"
	"github.com/stratus-cloud/stratus/internal/cephtest"
	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// cephCluster is the cluster scripts/ceph-setup.sh runs
// (STRATUS_CEPH_DIR, default /var/lib/stratus-ceph): its conf, the
// client.cinder key and the monitor's msgr v1 address. Without one that
// answers the test fails under CI=true and skips elsewhere.
type cephCluster struct {
	conf, keyring, key, mon string
	rbd                     *storage.RBD
}

func needCeph(t *testing.T) *cephCluster {
	t.Helper()
	cl := cephtest.Need(t)
	c := &cephCluster{conf: cl.Conf, keyring: cl.Keyring, mon: cl.Mon}
	var err error
	if c.key, err = storage.CephKey(c.keyring, cephtest.User); err != nil {
		cephtest.Missing(t, "%v", err)
	}
	if c.rbd, err = storage.NewRBD(storage.RBDConfig{Pool: cephtest.Pool, User: cephtest.User, Conf: c.conf}); err != nil {
		cephtest.Missing(t, "%v", err)
	}
	return c
}

// io runs a qemu-io command on pool/image through QEMU's rbd driver
// (the kernel's rbd module is not needed) and fails on a pattern
// mismatch.
func (c *cephCluster) io(t *testing.T, spec, command string) {
	t.Helper()
	qemutest.Must(t, "rbd:"+spec+":id=cinder:conf="+c.conf, qemutest.Opts{Format: "raw"}, command)
}

// rbdDiskAlias is the device alias of the live domain's RBD disk of
// pool/image, with cephx authentication by secret.
func rbdDiskAlias(t *testing.T, lv *golibvirt.Libvirt, dom golibvirt.Domain, spec, secret string) string {
	t.Helper()
	x, err := lv.DomainGetXMLDesc(dom, 0)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?s)<disk type='network'[^>]*>.*?</disk>`)
	for _, d := range re.FindAllString(x, -1) {
		if strings.Contains(d, "protocol='rbd' name='"+spec+"'") &&
			strings.Contains(d, "<auth username='cinder'>") && strings.Contains(d, "uuid='"+secret+"'") {
			if m := regexp.MustCompile(`<alias name='([^']+)'/>`).FindStringSubmatch(d); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no RBD disk of %s with secret %s in the live domain:\n%s", spec, secret, x)
	return ""
}

// TestAttachRBDVolume: a volume made by the RBD backend on the real
// cluster, with data written through QEMU's rbd driver, hot-plugs into a
// running QEMU guest as a network disk that authenticates with a libvirt
// ceph secret (the key is in no XML); the guest's QEMU reads the data
// and writes more, and after the detach the image holds both. The
// volume and the secret are gone at the end.
func TestAttachRBDVolume(t *testing.T) {
	c := needCeph(t)
	e := newEnv(t, nil)
	began := time.Now()
	vol := &structs.Volume{ID: "rbd-" + uuid.NewString()[:8], SizeGB: 1}
	spec, err := c.rbd.CreateVolume(ctx(t), vol, storage.Source{})
	if err != nil {
		t.Fatal(err)
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			_ = c.rbd.DeleteVolume(context.Background(), vol.ID)
		}
	})
	c.io(t, spec, "write -P 0xab 0 64k")

	secret := uuid.NewString()
	if err := e.drv.DefineCephSecret(ctx(t), secret, "cinder", c.key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.drv.UndefineSecret(context.Background(), secret) })
	// Defining it again (an agent restart) is harmless.
	if err := e.drv.DefineCephSecret(ctx(t), secret, "cinder", c.key); err != nil {
		t.Fatalf("second define: %v", err)
	}
	if err := e.drv.DefineCephSecret(ctx(t), "not-a-uuid", "cinder", c.key); err == nil {
		t.Error("a secret with a bad uuid was defined")
	}

	if _, err := e.drv.Spawn(ctx(t), tinySpec("r")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.drv.Destroy(context.Background(), "r") })
	name := e.drv.DomainName("r")
	dom, err := e.raw.DomainLookupByName(name)
	if err != nil {
		t.Fatal(err)
	}
	netVol := &virt.Volume{ID: vol.ID, Network: &virt.NetworkDisk{Protocol: virt.NetworkRBD, Name: spec,
		Hosts: []string{c.mon}, User: "cinder", SecretUUID: secret}}
	if err := e.drv.AttachVolume(ctx(t), "r", netVol); err != nil {
		t.Fatalf("AttachVolume: %v", err)
	}
	t.Logf("attached %v after the start", time.Since(began))
	for _, flags := range []golibvirt.DomainXMLFlags{0, golibvirt.DomainXMLInactive} {
		x, err := e.raw.DomainGetXMLDesc(dom, flags)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(x, c.key) {
			t.Fatal("the cephx key is in the domain's XML")
		}
		if !strings.Contains(x, "protocol='rbd' name='"+spec+"'") {
			t.Fatalf("no RBD disk in the domain's XML (flags %d):\n%s", flags, x)
		}
	}
	alias := rbdDiskAlias(t, e.raw, dom, spec, secret)
	readThrough(t, e.raw, dom, alias, 0xab, 0)
	writeThrough(t, e.raw, dom, alias, 0xcd, 64<<10)

	if err := e.drv.DetachVolume(ctx(t), "r", vol.ID); err != nil {
		t.Fatalf("DetachVolume: %v", err)
	}
	if x, _ := e.raw.DomainGetXMLDesc(dom, 0); strings.Contains(x, "protocol='rbd'") {
		t.Fatalf("RBD disk still in the live domain after the detach:\n%s", x)
	}
	c.io(t, spec, "read -P 0xab 0 64k")
	c.io(t, spec, "read -P 0xcd 64k 64k")

	if err := e.drv.Destroy(ctx(t), "r"); err != nil {
		t.Fatal(err)
	}
	if err := c.rbd.DeleteVolume(ctx(t), vol.ID); err != nil {
		t.Fatal(err)
	}
	deleted = true
	out, err := exec.Command("rbd", "-c", c.conf, "--id", "cinder", "ls", "volumes").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), storage.RBDVolumeImage(vol.ID)) {
		t.Fatalf("image %s left behind", storage.RBDVolumeImage(vol.ID))
	}
	if err := e.drv.UndefineSecret(ctx(t), secret); err != nil {
		t.Fatal(err)
	}
	if _, err := e.raw.SecretLookupByUUID(golibvirt.UUID(uuid.MustParse(secret))); err == nil ||
		!strings.Contains(err.Error(), "no secret with matching uuid") {
		t.Fatalf("secret %s after UndefineSecret: %v", secret, err)
	}
	// Undefining what is gone is a no-op.
	if err := e.drv.UndefineSecret(ctx(t), secret); err != nil {
		t.Fatalf("second undefine: %v", err)
	}
	t.Logf("done %v after the start", time.Since(began))
}
