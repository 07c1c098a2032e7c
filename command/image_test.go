package command

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

// TestImageCommandsAgainstDevAgent registers an image from a file,
// lists, shows, downloads and deletes it through a real agent.
func TestImageCommandsAgainstDevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	t.Setenv(api.EnvAddress, devAgent(t))
	t.Setenv(api.EnvToken, "")
	dir := t.TempDir()
	data := bytes.Repeat([]byte("stratus "), 300_000)
	path := filepath.Join(dir, "disk.qcow2")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(data)
	wantMD5 := hex.EncodeToString(sum[:])

	out, errOut, code := run(t, "image", "create", "-file", path, "-property", "os_distro=debian", "-tag", "t1", "debian")
	if code != 0 {
		t.Fatalf("create: %d %s %s", code, out, errOut)
	}
	assertContains(t, "create", out, `Image "debian" created with ID`, "2.3 MiB, MD5 "+wantMD5)
	// Not a terminal: plain progress lines.
	assertContains(t, "progress", errOut, "Uploading debian: 2.3 MiB\n", "Uploading debian: done, 2.3 MiB in ")

	var img api.Image
	if err := json.Unmarshal([]byte(runOK(t, "image", "show", "-json", "debian")), &img); err != nil {
		t.Fatal(err)
	}
	if img.Status != "active" || img.DiskFormat != "qcow2" || img.Visibility != "public" || img.Checksum != wantMD5 ||
		img.Properties["os_distro"] != "debian" || len(img.Tags) != 1 || len(img.Locations) != 1 {
		t.Fatalf("image %+v", img)
	}
	out = runOK(t, "image", "show", img.ID)
	assertContains(t, "show", out, "Status           = active", "os_distro = debian")

	// The dev image is there too.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out = runOK(t, "image", "list")
		if strings.Contains(out, "cirros") || time.Now().After(deadline) {
			break
		}
	}
	assertContains(t, "list", out, "debian", "active", "2.3 MiB", "qcow2", "public", "cirros")

	target := filepath.Join(dir, "out.img")
	out, errOut, code = run(t, "image", "download", "-file", target, "debian")
	if code != 0 {
		t.Fatalf("download: %d %s %s", code, out, errOut)
	}
	if got, _ := os.ReadFile(target); !bytes.Equal(got, data) {
		t.Fatalf("downloaded %d bytes", len(got))
	}
	assertContains(t, "download progress", errOut, "Downloading debian: done")
	// To standard output when it is not a terminal.
	out = runOK(t, "image", "download", "debian")
	if out != string(data) {
		t.Fatalf("downloaded to stdout: %d bytes", len(out))
	}

	// An image without data; a name that does not exist.
	out = runOK(t, "image", "create", "-visibility", "private", "empty")
	assertContains(t, "empty", out, "no data yet")
	if _, errOut, code := run(t, "image", "download", "-file", target, "empty"); code != 1 || !strings.Contains(errOut, "has no data") {
		t.Fatalf("download of an empty image: %d %s", code, errOut)
	}
	if _, errOut, code := run(t, "image", "create", "-file", filepath.Join(dir, "missing"), "x"); code != 1 || !strings.Contains(errOut, "Error opening image file") {
		t.Fatalf("missing file: %d %s", code, errOut)
	}
	out = runOK(t, "image", "delete", "debian", "empty")
	assertContains(t, "delete", out, `Image "debian" deleted`, `Image "empty" deleted`)
	if _, errOut, code := run(t, "image", "show", "debian"); code != 1 || !strings.Contains(errOut, "not found") {
		t.Fatalf("show after delete: %d %s", code, errOut)
	}
}

func TestTransferProgress(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Unix(0, 0)
	p := &transfer{w: &buf, tty: true, label: "Uploading x", total: 4 << 20, now: func() time.Time { return clock }}
	p.start = clock
	clock = clock.Add(time.Second)
	p.add(1 << 20)
	if got := buf.String(); got != "\r\033[KUploading x  25% [=======>                      ] 1.0 MiB/4.0 MiB 1.0 MiB/s" {
		t.Fatalf("bar %q", got)
	}
	p.add(1 << 20) // within 100ms: not redrawn
	if strings.Count(buf.String(), "\r") != 1 {
		t.Fatalf("redrawn too often: %q", buf.String())
	}
	p.finish(true)
	if !strings.HasSuffix(buf.String(), "2.0 MiB/4.0 MiB 2.0 MiB/s\n") {
		t.Fatalf("final %q", buf.String())
	}

	buf.Reset()
	plain := newTransfer(&buf, "Downloading y", 100)
	_, _ = plain.reader(strings.NewReader(strings.Repeat("x", 100))).Read(make([]byte, 60))
	plain.finish(true)
	assertContains(t, "plain", buf.String(), "Downloading y: 100 B\n", "Downloading y: 50% (60 B of 100 B)\n", "Downloading y: done, 60 B")
	if humanBytes(1536) != "1.5 KiB" || humanBytes(3<<30) != "3.0 GiB" || humanBytes(7) != "7 B" {
		t.Fatal("humanBytes")
	}
}

// TestDevNullIsNoTerminal: /dev/null is a character device, and a
// progress bar redrawn into it would be noise; only a real terminal gets
// the bar.
func TestDevNullIsNoTerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("/dev/null taken for a terminal")
	}
}
