package libvirt_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// TestSpawnBacksOntoTheImagePath: an instance built from
// InstanceSpec.ImagePath (the agent's cached image) gets a qcow2 overlay
// whose backing file is that very file — qcow2 or raw, with its format —
// and nothing is copied into the pool; a snapshot of it is a standalone
// qcow2 image of the same size.
func TestSpawnBacksOntoTheImagePath(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	cache := t.TempDir()
	qcow := filepath.Join(cache, "qcow2-base")
	raw := filepath.Join(cache, "raw-base")
	for _, c := range []struct{ path, format, size string }{{qcow, "qcow2", "2G"}, {raw, "raw", "1536M"}} {
		if out, err := exec.Command("qemu-img", "create", "-q", "-f", c.format, c.path, c.size).CombinedOutput(); err != nil {
			t.Fatalf("qemu-img create: %v: %s", err, out)
		}
	}
	for _, c := range []struct {
		id, path, format string
		size             int64
	}{{"q", qcow, "qcow2", 2 << 30}, {"w", raw, "raw", 1536 << 20}} {
		spec := tinySpec(c.id)
		spec.ImageID, spec.ImagePath = "img-"+c.id, c.path
		// The image path wins over the property fallback.
		spec.ImageProperties = map[string]string{libvirt.ImagePathProperty: "/nonexistent/disk.qcow2"}
		if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
			t.Fatalf("spawn on a %s base: %v", c.format, err)
		}
		name := e.drv.DomainName(c.id)
		root := diskOf(domainXML(t, e.raw, name, 0), "vda")
		vol := volume(t, e.raw, e.drv.PoolName(), name+"-disk")
		if vol.BackingStore == nil || vol.BackingStore.Path != c.path || vol.BackingStore.Format == nil ||
			vol.BackingStore.Format.Type != c.format {
			t.Errorf("%s: root volume backing %+v, want %s (%s)", c.id, vol.BackingStore, c.path, c.format)
		}
		info := qemuImgInfo(t, root)
		if info.Format != "qcow2" || info.BackingFilename != c.path || info.VirtualSize != c.size {
			t.Errorf("%s: root disk %+v, want a qcow2 overlay of %d bytes on %s", c.id, info, c.size, c.path)
		}
		snap, err := e.drv.Snapshot(ctx(t), c.id, "snap-"+c.id)
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		if s := qemuImgInfo(t, snap); s.Format != "qcow2" || s.BackingFilename != "" || s.VirtualSize != c.size {
			t.Errorf("%s: snapshot %+v, want a standalone qcow2 of %d bytes", c.id, s, c.size)
		}
	}
	files, err := os.ReadDir(e.cfg.ImagesDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if len(f.Name()) > 5 && f.Name()[:5] == "base-" {
			t.Errorf("the base was copied into the pool: %s", f.Name())
		}
	}
	// Destroying the instances leaves the cached images alone.
	for _, id := range []string{"q", "w"} {
		if err := e.drv.Destroy(ctx(t), id); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{qcow, raw} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("cached image removed: %v", err)
		}
	}
}
