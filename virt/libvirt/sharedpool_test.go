package libvirt

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
