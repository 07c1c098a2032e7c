package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bfvPattern is what the boot-from-volume test's image holds at 1 MiB:
// found in the volume made from it, and still there once the server
// that booted from the volume is gone.
var bfvPattern = bytes.Repeat([]byte("stratus-bfv "), 4096)

// volumeHasPattern reports whether the volume file (qcow2) holds
// bfvPattern at 1 MiB, read through qemu-img.
func volumeHasPattern(t *testing.T, file string) bool {
	t.Helper()
	raw := filepath.Join(t.TempDir(), "volume.raw")
	if out, err := exec.Command("qemu-img", "convert", "-U", "-O", "raw", file, raw).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert %s: %v: %s", file, err, out)
	}
	data, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	return len(data) >= 1<<20+len(bfvPattern) && bytes.Equal(data[1<<20:1<<20+len(bfvPattern)], bfvPattern)
}

// TestOpenStackCLIBootFromVolume: `openstack server create
// --boot-from-volume` makes a volume from the image and boots the
// libvirt domain from the volume's file (the domain's vda), the server
// shows no image and lists the volume; deleting the server keeps the
// volume with the image's data; `openstack server create --volume`
// boots a second server from that volume; and a volume in use cannot
// boot another.
func TestOpenStackCLIBootFromVolume(t *testing.T) {
	t.Parallel()
	bin, env, ns, pool := libvirtStorageCLI(t, "osbfv")
	img := filepath.Join(t.TempDir(), "bfv.raw")
	data := make([]byte, 4<<20)
	copy(data[1<<20:], bfvPattern)
	if err := os.WriteFile(img, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mustOS(t, bin, env, "image", "create", "--file", img, "--disk-format", "raw", "--container-format", "bare", "bfv-image")
	mustOS(t, bin, env, "flavor", "create", "--ram", "64", "--disk", "1", "--vcpus", "1", "bfv.tiny")

	start := time.Now()
	var srv map[string]any
	osJSON(t, bin, env, &srv, "server", "create", "--image", "bfv-image", "--boot-from-volume", "1", "--flavor", "bfv.tiny", "--wait", "bfv-one")
	id, _ := srv["id"].(string)
	t.Cleanup(func() { _, _, _ = runOS(t, bin, env, "server", "delete", "--wait", id) })
	t.Logf("booted from a new volume in %v", time.Since(start))
	var vols []map[string]any
	osJSONVol(t, bin, env, &vols, "volume", "list")
	if len(vols) != 1 {
		t.Fatalf("volumes: %v", vols)
	}
	volID, _ := vols[0]["ID"].(string)
	file := filepath.Join(pool, "volume-"+volID+".qcow2")
	x := domainXML(t, ns, id)
	if !strings.Contains(x, file) || !strings.Contains(x, "dev='vda'") {
		t.Fatalf("the volume's file is not the domain's root disk:\n%s", x)
	}
	if out := mustOS(t, bin, env, "server", "show", id, "-f", "value", "-c", "volumes_attached"); !strings.Contains(out, volID) {
		t.Fatalf("server volumes_attached: %s", out)
	}
	var vol map[string]any
	osJSONVol(t, bin, env, &vol, "volume", "show", volID)
	if vol["status"] != "in-use" || fmt.Sprint(vol["bootable"]) != "true" || !strings.Contains(fmt.Sprint(vol["attachments"]), "/dev/vda") {
		t.Fatalf("root volume: %v", vol)
	}
	if _, errOut, code := runOS(t, bin, env, "server", "create", "--volume", volID, "--flavor", "bfv.tiny", "bfv-taken"); code == 0 ||
		!strings.Contains(errOut, "status must be available") {
		t.Fatalf("booting from a volume in use: exit %d %s", code, errOut)
	}

	mustOS(t, bin, env, "server", "delete", "--wait", id)
	waitCLIStatus(t, bin, env, "volume", volID, "available")
	if !volumeHasPattern(t, file) {
		t.Fatalf("the volume lost the image's data with its server")
	}

	osJSON(t, bin, env, &srv, "server", "create", "--volume", volID, "--flavor", "bfv.tiny", "--wait", "bfv-two")
	id2, _ := srv["id"].(string)
	t.Cleanup(func() { _, _, _ = runOS(t, bin, env, "server", "delete", "--wait", id2) })
	if x := domainXML(t, ns, id2); !strings.Contains(x, file) {
		t.Fatalf("the second server does not boot from the volume:\n%s", x)
	}
	mustOS(t, bin, env, "server", "delete", "--wait", id2)
	waitCLIStatus(t, bin, env, "volume", volID, "available")
	mustOS(t, bin, env, "volume", "delete", volID)
	eventually(t, "the volume's file removed", 60*time.Second, func() error {
		if _, err := os.Stat(file); !os.IsNotExist(err) {
			return fmt.Errorf("%s: %v", file, err)
		}
		return nil
	})
}
