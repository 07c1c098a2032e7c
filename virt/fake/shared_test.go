package fake_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// files lists a directory's names.
func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestSharedStorage: two fake hosts on one shared directory build the
// same instance as a move onto shared storage or an evacuation does.
// The second finds the first's disks there (SharedDisks, read only),
// builds on them under names of its own and never writes or deletes the
// first's files: a revert (the second destroys its copy) finds the
// source's data intact, a confirm (the first destroys its copy) leaves
// the destination's. A host without shared storage finds nothing.
func TestSharedStorage(t *testing.T) {
	ctx := t.Context()
	shared := t.TempDir()
	a := fake.New(fake.Config{HostName: "a", SharedDir: shared})
	b := fake.New(fake.Config{HostName: "b", SharedDir: shared})
	spec := smallSpec("i")
	spec.EphemeralGB = 1
	if _, err := a.Spawn(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteDisk("i", virt.DiskRoleRoot, []byte("written on a")); err != nil {
		t.Fatal(err)
	}
	aFiles := files(t, shared)
	if len(aFiles) != 2 {
		t.Fatalf("a's files on shared storage: %v, want root and ephemeral", aFiles)
	}
	if own, err := a.SharedDisks(ctx, "i", "img"); err != nil || len(own) != 0 {
		t.Fatalf("a finds its own disks as another host's: %+v, %v", own, err)
	}
	if none, err := fake.New(fake.Config{}).SharedDisks(ctx, "i", "img"); err != nil || none != nil {
		t.Fatalf("a host without shared storage found %+v, %v", none, err)
	}

	found, err := b.SharedDisks(ctx, "i", "img")
	if err != nil || len(found) != 2 || found[0].Role != virt.DiskRoleRoot || !found[0].Shared || found[0].BackingImageID != "img" ||
		found[1].Role != virt.DiskRoleEphemeral || found[1].BackingImageID != "" {
		t.Fatalf("b found %+v, %v", found, err)
	}
	bspec := smallSpec("i")
	bspec.EphemeralGB, bspec.Disks = 1, found
	if _, err := b.Spawn(ctx, bspec); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Disk("i", virt.DiskRoleRoot); string(got) != "written on a" {
		t.Fatalf("b's root disk %q, want a's data", got)
	}
	if err := b.WriteDisk("i", virt.DiskRoleRoot, []byte("written on b")); err != nil {
		t.Fatal(err)
	}
	all := files(t, shared)
	if len(all) != 4 {
		t.Fatalf("files after b's spawn %v, want a's two and b's own two", all)
	}
	for _, f := range aFiles {
		data, err := os.ReadFile(filepath.Join(shared, f))
		if err != nil {
			t.Fatalf("a's file %s: %v", f, err)
		}
		if strings.HasSuffix(f, "-"+virt.DiskRoleRoot) && string(data) != "written on a" {
			t.Fatalf("b changed a's root disk: %q", data)
		}
	}

	// Revert: b goes, a's disks stay as they were.
	if err := b.Destroy(ctx, "i"); err != nil {
		t.Fatal(err)
	}
	if got := files(t, shared); !slices.Equal(got, aFiles) {
		t.Fatalf("after b's destroy %v, want a's %v", got, aFiles)
	}
	if got, _ := a.Disk("i", virt.DiskRoleRoot); string(got) != "written on a" {
		t.Fatalf("a's data after the revert: %q", got)
	}

	// Confirm: b builds again, then a goes and b's files stay.
	if _, err := b.Spawn(ctx, bspec); err != nil {
		t.Fatal(err)
	}
	bFiles := slices.DeleteFunc(files(t, shared), func(f string) bool { return slices.Contains(aFiles, f) })
	if err := a.Destroy(ctx, "i"); err != nil {
		t.Fatal(err)
	}
	if got := files(t, shared); !slices.Equal(got, bFiles) || len(got) != 2 {
		t.Fatalf("after a's destroy %v, want b's %v", got, bFiles)
	}
	// Nothing of another host's is left for b to find.
	if again, err := b.SharedDisks(ctx, "i", "img"); err != nil || len(again) != 0 {
		t.Fatalf("b found %+v after a's destroy, %v", again, err)
	}
}

// TestSharedStorageSurvivesRestart: a reopened host knows its own
// files, and its destroy deletes them.
func TestSharedStorageSurvivesRestart(t *testing.T) {
	shared, state := t.TempDir(), filepath.Join(t.TempDir(), "state.json")
	d, err := fake.Open(fake.Config{StatePath: state, SharedDir: shared})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Spawn(t.Context(), smallSpec("i")); err != nil {
		t.Fatal(err)
	}
	d, err = fake.Open(fake.Config{StatePath: state, SharedDir: shared})
	if err != nil {
		t.Fatal(err)
	}
	if own, err := d.SharedDisks(t.Context(), "i", ""); err != nil || len(own) != 0 {
		t.Fatalf("reopened host finds its own disks as another's: %+v, %v", own, err)
	}
	if err := d.Destroy(t.Context(), "i"); err != nil {
		t.Fatal(err)
	}
	if got := files(t, shared); len(got) != 0 {
		t.Fatalf("files left after the destroy: %v", got)
	}
}

// TestSnapshotCarriesTheDisk: with a SnapshotDir, a snapshot is the root
// disk's data; without one, or of an empty disk, nothing is written.
func TestSnapshotCarriesTheDisk(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	d := fake.New(fake.Config{HostName: "h", SnapshotDir: dir})
	if _, err := d.Spawn(ctx, smallSpec("i")); err != nil {
		t.Fatal(err)
	}
	empty, err := d.Snapshot(ctx, "i", "snap-0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(empty); err == nil {
		t.Fatalf("a snapshot of an empty disk wrote %s", empty)
	}
	want := bytes.Repeat([]byte("guest data "), 100)
	if err := d.WriteDisk("i", virt.DiskRoleRoot, want); err != nil {
		t.Fatal(err)
	}
	path, err := d.Snapshot(ctx, "i", "snap-1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) || filepath.Dir(filepath.Dir(filepath.Dir(path))) != dir {
		t.Fatalf("snapshot %s: %d bytes, %v", path, len(got), err)
	}
	nodir := fake.New(fake.Config{})
	if _, err := nodir.Spawn(ctx, smallSpec("j")); err != nil {
		t.Fatal(err)
	}
	_ = nodir.WriteDisk("j", virt.DiskRoleRoot, want)
	if p, err := nodir.Snapshot(ctx, "j", "snap"); err != nil {
		t.Fatal(err)
	} else if _, err := os.Stat(p); err == nil {
		t.Fatalf("a fake without SnapshotDir wrote %s", p)
	}
}

// TestSharedPoolNamesTheSourcesFiles: a host with shared storage names
// each exported disk's file there, which another host sharing it finds
// (SharedFile) with the same bytes, and which nothing resolves outside
// the shared directory or on a host without shared storage.
func TestSharedPoolNamesTheSourcesFiles(t *testing.T) {
	ctx := t.Context()
	shared := t.TempDir()
	a := fake.New(fake.Config{HostName: "a", SharedDir: shared})
	b := fake.New(fake.Config{HostName: "b", SharedDir: shared})
	spec := smallSpec("i")
	spec.EphemeralGB = 1
	if _, err := a.Spawn(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteDisk("i", virt.DiskRoleRoot, []byte("written on a")); err != nil {
		t.Fatal(err)
	}
	if err := a.PowerOff(ctx, "i", 0); err != nil {
		t.Fatal(err)
	}
	disks, err := a.ExportDisks(ctx, "i")
	if err != nil || len(disks) != 2 {
		t.Fatalf("exported %+v, %v", disks, err)
	}
	for _, d := range disks {
		path, ok := b.SharedFile(d.File)
		if !ok {
			t.Fatalf("b does not find a's %s file %q", d.Role, d.File)
		}
		r, err := d.Open()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := io.ReadAll(r)
		_ = r.Close()
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: the shared file holds %q, the export %q (%v)", d.Role, got, want, err)
		}
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(shared), "outside"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "../outside", "/etc/passwd", ".", "..", "missing"} {
		if p, ok := b.SharedFile(name); ok {
			t.Errorf("SharedFile(%q) = %q, want refused", name, p)
		}
	}
	plain := fake.New(fake.Config{HostName: "c"})
	if _, ok := plain.SharedFile(disks[0].File); ok {
		t.Error("a host without shared storage found a shared file")
	}
	if _, err := plain.Spawn(ctx, smallSpec("j")); err != nil {
		t.Fatal(err)
	}
	if err := plain.PowerOff(ctx, "j", 0); err != nil {
		t.Fatal(err)
	}
	if own, err := plain.ExportDisks(ctx, "j"); err != nil || len(own) == 0 || own[0].File != "" {
		t.Errorf("a host without shared storage names files: %+v, %v", own, err)
	}
}
