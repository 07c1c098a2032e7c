package configdrive

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// needTool skips without a tool, and fails under CI=true.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI=true (scripts/ci-deps.sh installs it): %v", name, err)
		}
		t.Skipf("%s not installed: %v", name, err)
	}
	return p
}

func TestBuildIsReadableByIsoinfo(t *testing.T) {
	isoinfo := needTool(t, "isoinfo")
	files := map[string][]byte{
		"openstack/latest/meta_data.json":     []byte(`{"uuid":"x"}`),
		"openstack/2012-08-10/meta_data.json": []byte(`{"uuid":"y"}`),
		"openstack/latest/user_data":          []byte("#cloud-config\n"),
		"ec2/latest/meta-data.json":           []byte(`{}`),
	}
	img, err := Build(files, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "disk.config")
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(isoinfo, "-d", "-i", path).CombinedOutput()
	if err != nil {
		t.Fatalf("isoinfo -d: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Volume id: "+Label) {
		t.Fatalf("volume label is not %s:\n%s", Label, out)
	}
	if !strings.Contains(string(out), "Rock Ridge signatures version") {
		t.Errorf("no Rock Ridge extensions:\n%s", out)
	}
	if !strings.Contains(string(out), "Joliet with UCS level") {
		t.Errorf("no Joliet extensions:\n%s", out)
	}
	out, err = exec.Command(isoinfo, "-R", "-f", "-i", path).CombinedOutput()
	if err != nil {
		t.Fatalf("isoinfo -f: %v\n%s", err, out)
	}
	listed := strings.Fields(string(out))
	for name := range files {
		if !slices.Contains(listed, "/"+name) {
			t.Errorf("%s is not on the drive; it lists %v", name, listed)
		}
	}
	for name, want := range files {
		got, err := exec.Command(isoinfo, "-R", "-i", path, "-x", "/"+name).Output()
		if err != nil {
			t.Fatalf("isoinfo -x %s: %v", name, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s reads %q, want %q", name, got, want)
		}
	}
}

func TestBuildRefusesPathsOutsideTheDrive(t *testing.T) {
	for _, name := range []string{"../etc/passwd", "/abs", ".", ""} {
		if _, err := Build(map[string][]byte{name: []byte("x")}, t.TempDir()); err == nil {
			t.Errorf("Build accepted %q", name)
		}
	}
}

func TestWriteLeavesOnlyTheImage(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "disk.config")
	if err := Write(dst, map[string][]byte{"openstack/latest/meta_data.json": []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "disk.config" {
		t.Fatalf("directory holds %v, want only disk.config", entries)
	}
}
