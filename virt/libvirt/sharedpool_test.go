package libvirt

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// These tests need no libvirtd.

func TestSharedFileStaysInThePool(t *testing.T) {
	root := t.TempDir()
	pool := filepath.Join(root, "images")
	if err := os.MkdirAll(filepath.Join(pool, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(pool, "stratus-x+0badcafe-disk"), filepath.Join(root, "outside"), filepath.Join(pool, ".hidden")} {
		if err := os.WriteFile(f, []byte("data"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "outside"), filepath.Join(pool, "link")); err != nil {
		t.Fatal(err)
	}
	d := &Driver{cfg: Config{ImagesDir: pool, SharedStorage: true}}
	if p, ok := d.SharedFile("stratus-x+0badcafe-disk"); !ok || p != filepath.Join(pool, "stratus-x+0badcafe-disk") {
		t.Errorf("the pool's own file: %q %v", p, ok)
	}
	for _, name := range []string{"", ".", "..", "../outside", "sub", "link", ".hidden", "/etc/passwd", "sub/../stratus-x+0badcafe-disk", "missing"} {
		if p, ok := d.SharedFile(name); ok {
			t.Errorf("SharedFile(%q) = %q, want refused", name, p)
		}
	}
	if got := d.poolFile(filepath.Join(pool, "stratus-x+0badcafe-disk")); got != "stratus-x+0badcafe-disk" {
		t.Errorf("poolFile = %q", got)
	}
	if got := d.poolFile(filepath.Join(root, "outside")); got != "" {
		t.Errorf("poolFile outside the pool = %q", got)
	}
	d.cfg.SharedStorage = false
	if _, ok := d.SharedFile("stratus-x+0badcafe-disk"); ok {
		t.Error("a pool that is not shared gave a file")
	}
	if got := d.poolFile(filepath.Join(pool, "stratus-x+0badcafe-disk")); got != "" {
		t.Errorf("poolFile of an unshared pool = %q", got)
	}
}

func TestCloneFileKeepsDataAndHoles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	const size = 64 << 20
	chunk := bytes.Repeat([]byte{0xab}, 1<<20)
	for _, off := range []int64{0, 20 << 20, size - 1<<20} {
		if _, err := f.WriteAt(chunk, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(src)
	dst := filepath.Join(dir, "dst")
	cloned, err := cloneFile(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, before) {
		t.Fatal("the copy differs from the source")
	}
	if after, _ := os.ReadFile(src); !bytes.Equal(after, before) {
		t.Fatal("the source changed")
	}
	st, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
	if used := st.Sys().(*syscall.Stat_t).Blocks * 512; !cloned && used > 8<<20 {
		t.Errorf("the sparse copy uses %d bytes on disk, want about the 3 MiB of data", used)
	}
	t.Logf("cloned: %v", cloned)
	if _, err := cloneFile(src, dst+"-again"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := filepath.Glob(filepath.Join(dir, ".*")); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// TestSweepImportsRemovesOnlyTheInstancesLeftovers: the ".import" copy
// and the clone's hidden temporary file of instance x are removed (in a
// shared pool only once idle), never another instance's, a volume, or
// a file that only looks alike.
func TestSweepImportsRemovesOnlyTheInstancesLeftovers(t *testing.T) {
	for _, shared := range []bool{false, true} {
		pool := t.TempDir()
		d := &Driver{cfg: Config{ImagesDir: pool, SharedStorage: shared, Logger: hclog.NewNullLogger()}, prefix: "stratus-"}
		gone := []string{"stratus-x+0badcafe-disk.import", ".stratus-x+0badcafe-disk.import.part-123", "stratus-x-disk.import"}
		kept := []string{"stratus-x+0badcafe-disk", "stratus-y+0badcafe-disk.import", ".stratus-xy+0badcafe-disk.import.part-1",
			"stratus-x+0badcafe-disk.importer", "stratus-x+0badcafe-disk.part"}
		for _, f := range append(append([]string{}, gone...), kept...) {
			if err := os.WriteFile(filepath.Join(pool, f), []byte("data"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Now()
		if shared {
			// Fresh files may be another host's copy in progress.
			d.sweepImports("x", now)
			for _, f := range gone {
				if _, err := os.Stat(filepath.Join(pool, f)); err != nil {
					t.Fatalf("shared pool: a fresh %s was swept: %v", f, err)
				}
			}
			now = now.Add(importIdle + time.Minute)
		}
		d.sweepImports("x", now)
		for _, f := range gone {
			if _, err := os.Stat(filepath.Join(pool, f)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("shared %v: %s left: %v", shared, f, err)
			}
		}
		for _, f := range kept {
			if _, err := os.Stat(filepath.Join(pool, f)); err != nil {
				t.Errorf("shared %v: %s swept: %v", shared, f, err)
			}
		}
	}
}
