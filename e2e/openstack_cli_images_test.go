package e2e

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/stratus-cloud/stratus/internal/libvirtlock"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// osJSON runs an openstack command with -f json and decodes its output.
func osJSON(t *testing.T, bin string, env []string, out any, args ...string) {
	t.Helper()
	text := mustOS(t, bin, env, append(args, "-f", "json")...)
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatalf("openstack %s: %v\n%s", strings.Join(args, " "), err, text)
	}
}

// fileMD5 is the hex MD5 of a file, Glance's checksum.
func fileMD5(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}

// devCLI starts a dev agent (with extra flags) and returns the openstack
// client and the admin's environment once identity answers.
func devCLI(t *testing.T, name string, args ...string) (bin string, env []string, dev *agentProc) {
	t.Helper()
	bin = requireCLI(t, "openstack")
	dev = startAgent(t, name, append([]string{"--dev"}, args...)...)
	env = osEnv(t, dev.http, "admin")
	eventually(t, "identity seeded", 60*time.Second, func() error {
		if _, errOut, code := runOS(t, bin, env, "image", "show", "cirros"); code != 0 {
			return fmt.Errorf("image show cirros: %s", errOut)
		}
		return nil
	})
	return bin, env, dev
}

// snapshotAndCheck takes `openstack server image create --wait` of the
// server and checks the image: active, a snapshot of the server, its
// downloaded data matching its checksum. It returns the saved file.
func snapshotAndCheck(t *testing.T, bin string, env []string, serverID, name string) (imageID, saved string) {
	t.Helper()
	var created map[string]any
	osJSON(t, bin, env, &created, "server", "image", "create", "--name", name, "--wait", serverID)
	imageID, _ = created["id"].(string)
	var img map[string]any
	osJSON(t, bin, env, &img, "image", "show", name)
	props, _ := img["properties"].(map[string]any)
	if img["status"] != "active" || img["id"] != imageID || img["disk_format"] != "qcow2" || props["instance_uuid"] != serverID ||
		props["image_type"] != "snapshot" {
		t.Fatalf("snapshot image: %v", img)
	}
	saved = filepath.Join(t.TempDir(), name+".qcow2")
	mustOS(t, bin, env, "image", "save", "--file", saved, name)
	if sum := fileMD5(t, saved); sum != img["checksum"] {
		t.Fatalf("downloaded snapshot md5 %s, image checksum %v", sum, img["checksum"])
	}
	var srv map[string]any
	osJSON(t, bin, env, &srv, "server", "show", serverID)
	if srv["status"] != "ACTIVE" || srv["OS-EXT-STS:task_state"] != nil {
		t.Fatalf("server after its snapshot: status %v task %v", srv["status"], srv["OS-EXT-STS:task_state"])
	}
	if out := mustOS(t, bin, env, "server", "event", "list", serverID, "-f", "value", "-c", "Action"); !strings.Contains(out, "createImage") {
		t.Fatalf("server event list: %s", out)
	}
	return imageID, saved
}

// TestOpenStackCLISnapshotsAndBackups: `openstack server image create`
// and `openstack server backup create` against a dev agent (fake
// driver): the image goes queued → active with the server's snapshot as
// data, the server returns to ACTIVE, and backups rotate.
func TestOpenStackCLISnapshotsAndBackups(t *testing.T) {
	t.Parallel()
	bin, env, _ := devCLI(t, "ossnap")
	var srv map[string]any
	osJSON(t, bin, env, &srv, "server", "create", "--image", "cirros", "--flavor", "m1.tiny", "--wait", "snap-src")
	id, _ := srv["id"].(string)
	snapshotAndCheck(t, bin, env, id, "snap-1")

	// Backups of a type keep the newest `rotate` of them.
	for _, name := range []string{"daily-1", "daily-2", "daily-3"} {
		mustOS(t, bin, env, "server", "backup", "create", "--name", name, "--type", "daily", "--rotate", "2", "--wait", id)
	}
	eventually(t, "backup rotation", 60*time.Second, func() error {
		out := mustOS(t, bin, env, "image", "list", "-f", "value", "-c", "Name")
		if strings.Contains(out, "daily-1") || !strings.Contains(out, "daily-2") || !strings.Contains(out, "daily-3") {
			return fmt.Errorf("images: %s", out)
		}
		return nil
	})
	// A snapshot of a stopped server leaves it stopped.
	mustOS(t, bin, env, "server", "stop", id)
	eventually(t, "server stopped", 60*time.Second, func() error {
		if out := mustOS(t, bin, env, "server", "show", id, "-f", "value", "-c", "status"); strings.TrimSpace(out) != "SHUTOFF" {
			return fmt.Errorf("status %s", out)
		}
		return nil
	})
	mustOS(t, bin, env, "server", "image", "create", "--name", "snap-off", "--wait", id)
	if out := mustOS(t, bin, env, "server", "show", id, "-f", "value", "-c", "status"); strings.TrimSpace(out) != "SHUTOFF" {
		t.Fatalf("stopped server after its snapshot: %s", out)
	}
	mustOS(t, bin, env, "server", "delete", "--wait", id)
}

// requireLibvirtd skips a test without a usable libvirtd, or fails it
// under CI=true (scripts/libvirt-setup.sh installs and starts it).
func requireLibvirtd(t *testing.T) {
	t.Helper()
	// Hold the machine's libvirt test lock so that virt/libvirt's restart
	// test never stops libvirtd under this test's guests.
	libvirtlock.Shared(t)
	out, err := exec.Command("virsh", "-c", "qemu:///system", "version").CombinedOutput()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("libvirtd is not usable: %v: %s (run scripts/libvirt-setup.sh as root)", err, out)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// removeNamespace removes whatever a libvirt namespace left in libvirtd:
// its domains and its storage pool.
func removeNamespace(ns string) {
	virsh := func(args ...string) string {
		out, _ := exec.Command("virsh", append([]string{"-c", "qemu:///system"}, args...)...).Output()
		return string(out)
	}
	for _, dom := range strings.Fields(virsh("list", "--all", "--name")) {
		if strings.HasPrefix(dom, "stratus-"+ns+"-") {
			virsh("destroy", dom)
			virsh("undefine", "--managed-save", "--nvram", dom)
		}
	}
	pool := "stratus-" + ns
	virsh("pool-destroy", pool)
	virsh("pool-undefine", pool)
}

// TestOpenStackCLIBootsUploadedImageOnLibvirt: an image uploaded with
// `openstack image create` boots with `openstack server create --image`
// on a dev agent with the libvirt driver; the guest's root disk is a
// qcow2 overlay whose backing file is the agent's cached copy of the
// image (named by its sha512); `openstack server image create` then
// uploads a real snapshot whose data matches its checksum.
func TestOpenStackCLIBootsUploadedImageOnLibvirt(t *testing.T) {
	t.Parallel()
	bin, env, images, ns := libvirtDevCLI(t, "oslibvirt")
	dir := t.TempDir()
	cache := filepath.Join(filepath.Dir(images), "cache")

	disk := filepath.Join(dir, "disk.qcow2")
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", disk, "64M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img create: %v: %s", err, out)
	}
	var img map[string]any
	osJSON(t, bin, env, &img, "image", "create", "--file", disk, "--disk-format", "qcow2", "--container-format", "bare",
		"--public", "e2e-disk")
	osJSON(t, bin, env, &img, "image", "show", "e2e-disk")
	hash, _ := img["os_hash_value"].(string)
	if props, ok := img["properties"].(map[string]any); ok && hash == "" {
		hash, _ = props["os_hash_value"].(string) // where this client shows it
	}
	if img["status"] != "active" || len(hash) != 128 {
		t.Fatalf("uploaded image: %v", img)
	}
	mustOS(t, bin, env, "flavor", "create", "--ram", "64", "--disk", "1", "--vcpus", "1", "e2e.tiny")

	var srv map[string]any
	osJSON(t, bin, env, &srv, "server", "create", "--image", "e2e-disk", "--flavor", "e2e.tiny", "--wait", "vm")
	id, _ := srv["id"].(string)
	t.Cleanup(func() { _, _, _ = runOS(t, bin, env, "server", "delete", "--wait", id) })
	if srv["status"] != "ACTIVE" {
		t.Fatalf("server create --wait: %v", srv)
	}

	// The root disk backs onto the cached image.
	// Its name carries the spawn's attempt (stratus-<domain>+<attempt>-disk).
	roots, _ := filepath.Glob(filepath.Join(images, "stratus-"+ns+"-"+id+"+*-disk"))
	if len(roots) != 1 {
		t.Fatalf("root disks of %s in %s: %v", id, images, roots)
	}
	root := roots[0]
	out, err := exec.Command("qemu-img", "info", "-U", "--backing-chain", "--output=json", root).Output()
	if err != nil {
		t.Fatalf("qemu-img info %s: %v", root, err)
	}
	var chain []struct {
		Filename        string `json:"filename"`
		Format          string `json:"format"`
		BackingFilename string `json:"backing-filename"`
		VirtualSize     int64  `json:"virtual-size"`
	}
	if err := json.Unmarshal(out, &chain); err != nil {
		t.Fatal(err)
	}
	cached := filepath.Join(cache, hash)
	if len(chain) != 2 || chain[0].Format != "qcow2" || chain[0].BackingFilename != cached || chain[1].Format != "qcow2" ||
		chain[1].VirtualSize != 64<<20 {
		t.Fatalf("backing chain of the root disk: %s; want an overlay on %s", out, cached)
	}
	if sum := fileMD5(t, cached); sum != img["checksum"] {
		t.Fatalf("cached image md5 %s, image checksum %v", sum, img["checksum"])
	}

	// A real snapshot: a standalone qcow2 of the root disk's size.
	_, saved := snapshotAndCheck(t, bin, env, id, "vm-snap")
	out, err = exec.Command("qemu-img", "info", "--output=json", saved).Output()
	if err != nil {
		t.Fatalf("qemu-img info %s: %v", saved, err)
	}
	var snap struct {
		Format          string `json:"format"`
		BackingFilename string `json:"backing-filename"`
		VirtualSize     int64  `json:"virtual-size"`
	}
	if err := json.Unmarshal(out, &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Format != "qcow2" || snap.BackingFilename != "" || snap.VirtualSize != 1<<30 {
		t.Fatalf("snapshot image: %s", out)
	}
	mustOS(t, bin, env, "server", "delete", "--wait", id)
}
