package libvirt_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// TestLiveMigrateWithoutSharedStorageKeepsTheDisk live-migrates running
// instances from the machine's libvirtd (A) to a peer (B) whose pool is
// another directory (no shared storage), with what the guest wrote (a
// qemu-io pattern written while it was stopped) followed: B runs from
// disks of its own names in its own pool, with the data; A's disks are
// gone. When B can open the instance's image the root disk arrives as an
// overlay on it (only the guest's writes travelled, NON_SHARED_INC);
// when it cannot (an image under /var/lib/libvirt, which the peer's
// namespace hides) the whole disk is copied into a standalone one.
func TestLiveMigrateWithoutSharedStorageKeepsTheDisk(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *libvirt.Config) { c.MigrationURI = testURI })
	peer := libvirtpeer.Start(t)
	bcfg := e.cfg
	bcfg.URI, bcfg.MigrationURI, bcfg.HostName = peer.URI, peer.URI, "peer-"+e.ns
	bcfg.ImagesDir = filepath.Join(t.TempDir(), "images-b")
	b, err := libvirt.New(bcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	braw := rawConnTo(t, peer.URI)
	// B's pool exists once B built something.
	if _, err := b.Spawn(ctx(t), tinySpec("pool")); err != nil {
		t.Fatal(err)
	}
	if err := b.Destroy(ctx(t), "pool"); err != nil {
		t.Fatal(err)
	}

	hidden := filepath.Join("/var/lib/libvirt/images", "stratus-test-"+e.ns+".qcow2")
	if err := os.MkdirAll(filepath.Dir(hidden), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", hidden, "1G").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img create: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = os.Remove(hidden) })

	for _, c := range []struct {
		id, image string
		overlay   bool
	}{{"inc", qcow2Image(t, "1G"), true}, {"full", hidden, false}} {
		spec := tinySpec(c.id)
		spec.ImageID, spec.ImagePath = "img-"+c.id, c.image
		spec.ConfigDrive = []byte("config drive bytes")
		name := e.drv.DomainName(c.id)
		if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
			t.Fatal(err)
		}
		if err := e.drv.PowerOff(ctx(t), c.id, time.Minute); err != nil {
			t.Fatal(err)
		}
		aDisks := disksOf(t, e.raw, name)
		writePattern(t, aDisks[0])
		if err := e.drv.PowerOn(ctx(t), c.id); err != nil {
			t.Fatal(err)
		}
		if err := e.drv.LiveMigrate(ctx(t), c.id, peer.URI); err != nil {
			t.Fatalf("%s: LiveMigrate: %v", c.id, err)
		}
		info, err := b.GetInfo(ctx(t), c.id)
		if err != nil || info.PowerState != virt.PowerRunning {
			t.Fatalf("%s on B: %+v, %v", c.id, info, err)
		}
		bDisks := disksOf(t, braw, name)
		if len(bDisks) != len(aDisks) {
			t.Fatalf("%s: B's disks %v, A's were %v", c.id, bDisks, aDisks)
		}
		for _, p := range bDisks {
			if slices.Contains(aDisks, p) || filepath.Dir(p) != bcfg.ImagesDir {
				t.Errorf("%s: B runs from %s, not a file of its own pool", c.id, p)
			}
		}
		if !hasPattern(t, bDisks[0]) {
			t.Errorf("%s: B's root disk lost what the guest wrote", c.id)
		}
		backing := qemuImgInfo(t, bDisks[0]).BackingFilename
		if c.overlay && backing != c.image {
			t.Errorf("%s: B's root disk is backed by %q, want an overlay on %s (incremental copy)", c.id, backing, c.image)
		}
		if !c.overlay && backing != "" {
			t.Errorf("%s: B's root disk is backed by %q, which B cannot open; want a whole copy", c.id, backing)
		}
		for _, p := range aDisks {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: A's disk %s outlived the migration: %v", c.id, p, err)
			}
		}
		if err := b.Destroy(ctx(t), c.id); err != nil {
			t.Fatal(err)
		}
		for _, p := range bDisks {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: B's disk %s outlived B's destroy: %v", c.id, p, err)
			}
		}
	}
}
