package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenStackCLIExtendsAnInUseVolume: `openstack volume set --size`
// at Block Storage 3.42 extends a volume attached to a running libvirt
// server on the volume's own host: the volume is in-use again with the
// new size and its attachment, and QEMU gives the guest the new size
// (`virsh domblkinfo`); the volume detaches and deletes as usual.
func TestOpenStackCLIExtendsAnInUseVolume(t *testing.T) {
	t.Parallel()
	bin, env, ns, pool := libvirtStorageCLI(t, "osextend")
	disk := filepath.Join(t.TempDir(), "disk.qcow2")
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", disk, "64M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img create: %v: %s", err, out)
	}
	mustOS(t, bin, env, "image", "create", "--file", disk, "--disk-format", "qcow2", "--container-format", "bare", "extend-disk")
	mustOS(t, bin, env, "flavor", "create", "--ram", "64", "--disk", "1", "--vcpus", "1", "extend.tiny")
	var srv map[string]any
	osJSON(t, bin, env, &srv, "server", "create", "--image", "extend-disk", "--flavor", "extend.tiny", "--wait", "grower")
	id, _ := srv["id"].(string)
	t.Cleanup(func() { _, _, _ = runOS(t, bin, env, "server", "delete", "--wait", id) })

	var vol map[string]any
	osJSONVol(t, bin, env, &vol, "volume", "create", "--size", "1", "grows")
	volID, _ := vol["id"].(string)
	waitCLIStatus(t, bin, env, "volume", "grows", "available")
	file := filepath.Join(pool, "volume-"+volID+".qcow2")
	mustOS(t, bin, env, "server", "add", "volume", id, "grows")
	waitCLIStatus(t, bin, env, "volume", "grows", "in-use")

	start := time.Now()
	mustOS(t, bin, env, "--os-volume-api-version", "3.42", "volume", "set", "--size", "2", "grows")
	eventually(t, "volume grows in-use at 2 GB", 60*time.Second, func() error {
		osJSONVol(t, bin, env, &vol, "volume", "show", "grows")
		if vol["status"] != "in-use" || fmt.Sprint(vol["size"]) != "2" {
			return fmt.Errorf("volume %v %v", vol["status"], vol["size"])
		}
		return nil
	})
	t.Logf("in-use at 2 GB %v after the extend", time.Since(start))
	if atts := fmt.Sprint(vol["attachments"]); !strings.Contains(atts, id) {
		t.Fatalf("volume attachments after the extend: %v", vol["attachments"])
	}
	out, err := exec.Command("virsh", "-c", "qemu:///system", "domblkinfo", domainName(t, ns, id), file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprint(2<<30)) {
		t.Fatalf("virsh domblkinfo: %v: %s", err, out)
	}

	mustOS(t, bin, env, "server", "remove", "volume", id, "grows")
	waitCLIStatus(t, bin, env, "volume", "grows", "available")
	mustOS(t, bin, env, "volume", "delete", "grows")
}
