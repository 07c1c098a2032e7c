package diskxfer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/virt"
)

// pool is a destination's shared pool holding the source's files.
func pool(t *testing.T, e *exporter) (dir string, local func(string) (string, bool)) {
	dir = t.TempDir()
	e.files = map[string]string{}
	for role, data := range e.disks {
		name := "inst+0badcafe-" + role
		e.files[role] = name
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, func(name string) (string, bool) {
		if strings.ContainsRune(name, '/') {
			return "", false
		}
		p := filepath.Join(dir, name)
		_, err := os.Stat(p)
		return p, err == nil
	}
}

func TestFetchTakesSharedFilesWithoutFetchingThem(t *testing.T) {
	e, src := newExporter(t)
	dir, local := pool(t, e)
	f := &Fetcher{Local: local, Skipped: func(role string, err error) { t.Errorf("%s fetched: %v", role, err) }}
	got, err := f.Fetch(context.Background(), src, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d disks, want 2", len(got))
	}
	for _, d := range got {
		if !d.Shared || d.Path != filepath.Join(dir, e.files[d.Role]) {
			t.Errorf("%s: %+v, want the shared pool's file", d.Role, d)
		}
		if d.Role == virt.DiskRoleRoot && d.BackingImageID != "img-1" {
			t.Errorf("root backing image %q", d.BackingImageID)
		}
	}
	if len(e.ranges) != 0 {
		t.Errorf("disk data was requested %d times over the export, want none", len(e.ranges))
	}
}

func TestFetchFetchesASharedFileThatDiffers(t *testing.T) {
	e, src := newExporter(t)
	dir, local := pool(t, e)
	// The pool's root file is not the source's disk (another host's
	// pool of the same name, or changed since): same size, other bytes.
	if err := os.WriteFile(filepath.Join(dir, e.files[virt.DiskRoleRoot]), randomBytes(t, len(e.disks[virt.DiskRoleRoot])), 0o600); err != nil {
		t.Fatal(err)
	}
	// The ephemeral one is not there at all.
	if err := os.Remove(filepath.Join(dir, e.files[virt.DiskRoleEphemeral])); err != nil {
		t.Fatal(err)
	}
	skipped := map[string]string{}
	f := &Fetcher{Local: local, Skipped: func(role string, err error) { skipped[role] = err.Error() }}
	got, err := f.Fetch(context.Background(), src, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	checkFetched(t, e, got)
	for _, d := range got {
		if d.Shared {
			t.Errorf("%s taken from the pool though it differs", d.Role)
		}
	}
	if !strings.Contains(skipped[virt.DiskRoleRoot], "digest") || skipped[virt.DiskRoleEphemeral] == "" {
		t.Errorf("reasons given: %v", skipped)
	}
	if len(e.ranges) != 2 {
		t.Errorf("%d disk requests, want 2", len(e.ranges))
	}
}

func TestFetchNeverLooksOutsideThePool(t *testing.T) {
	e, src := newExporter(t)
	_, local := pool(t, e)
	e.files[virt.DiskRoleRoot] = "../../etc/passwd"
	asked := []string{}
	f := &Fetcher{Local: func(name string) (string, bool) {
		asked = append(asked, name)
		return local(name)
	}}
	got, err := f.Fetch(context.Background(), src, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range got {
		if d.Role == virt.DiskRoleRoot && d.Shared {
			t.Fatalf("root taken from %s", d.Path)
		}
	}
	if len(asked) != 2 {
		t.Errorf("asked the pool for %v", asked)
	}
}
