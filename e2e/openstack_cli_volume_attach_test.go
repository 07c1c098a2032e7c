package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// libvirtStorageCLI starts a dev agent with the libvirt driver in a
// namespace of its own that is also a storage host, and returns the
// openstack CLI's environment, the namespace and the volume pool.
func libvirtStorageCLI(t *testing.T, name string) (bin string, env []string, ns, pool string) {
	t.Helper()
	requireLibvirtd(t)
	if _, err := exec.LookPath("qemu-img"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("qemu-img (qemu-utils) is required under CI=true: %v", err)
		}
		t.Skip("qemu-img (qemu-utils) is not installed")
	}
	bin, env, images, ns := libvirtDevCLIWith(t, name, "  storage {\n    pool_dir    = \"%[1]s/pool\"\n    capacity_gb = 20\n  }")
	return bin, env, ns, filepath.Join(filepath.Dir(images), "pool")
}

// domainXML is the live XML of server id's domain in namespace ns.
func domainXML(t *testing.T, ns, id string) string {
	t.Helper()
	name := domainName(t, ns, id)
	x, err := exec.Command("virsh", "-c", "qemu:///system", "dumpxml", name).Output()
	if err != nil {
		t.Fatalf("virsh dumpxml %s: %v", name, err)
	}
	return string(x)
}

// domainName is the name of server id's running domain in namespace ns.
func domainName(t *testing.T, ns, id string) string {
	t.Helper()
	out, err := exec.Command("virsh", "-c", "qemu:///system", "list", "--name").Output()
	if err != nil {
		t.Fatalf("virsh list: %v", err)
	}
	for _, name := range strings.Fields(string(out)) {
		if strings.Contains(name, ns) && strings.Contains(name, id) {
			return name
		}
	}
	t.Fatalf("no running domain of server %s in namespace %s: %s", id, ns, out)
	return ""
}

// TestOpenStackCLIServerAddRemoveVolume: `openstack server add volume`
// hot-plugs a volume kept on the server's own host into the running
// libvirt domain (the disk is in the live domain XML, the volume in-use
// with its attachment, the server lists it), `openstack server remove
// volume` unplugs it (available again, the file kept), `openstack server
// volume update` changes its delete_on_termination (Nova 2.85), and
// attaching a volume that is in use is refused with Cinder's message.
func TestOpenStackCLIServerAddRemoveVolume(t *testing.T) {
	t.Parallel()
	bin, env, ns, pool := libvirtStorageCLI(t, "osattach")
	disk := filepath.Join(t.TempDir(), "disk.qcow2")
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", disk, "64M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img create: %v: %s", err, out)
	}
	mustOS(t, bin, env, "image", "create", "--file", disk, "--disk-format", "qcow2", "--container-format", "bare", "attach-disk")
	mustOS(t, bin, env, "flavor", "create", "--ram", "64", "--disk", "1", "--vcpus", "1", "attach.tiny")
	var srv map[string]any
	osJSON(t, bin, env, &srv, "server", "create", "--image", "attach-disk", "--flavor", "attach.tiny", "--wait", "holder")
	id, _ := srv["id"].(string)
	t.Cleanup(func() { _, _, _ = runOS(t, bin, env, "server", "delete", "--wait", id) })

	var vol map[string]any
	osJSONVol(t, bin, env, &vol, "volume", "create", "--size", "1", "data")
	volID, _ := vol["id"].(string)
	waitCLIStatus(t, bin, env, "volume", "data", "available")
	file := filepath.Join(pool, "volume-"+volID+".qcow2")
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("volume file: %v", err)
	}

	start := time.Now()
	mustOS(t, bin, env, "server", "add", "volume", id, "data")
	waitCLIStatus(t, bin, env, "volume", "data", "in-use")
	t.Logf("attached in %v", time.Since(start))
	if x := domainXML(t, ns, id); !strings.Contains(x, file) {
		t.Fatalf("the volume's file is not a disk of the domain:\n%s", x)
	}
	osJSONVol(t, bin, env, &vol, "volume", "show", "data")
	if atts := fmt.Sprint(vol["attachments"]); !strings.Contains(atts, id) {
		t.Fatalf("volume attachments: %v", vol["attachments"])
	}
	if out := mustOS(t, bin, env, "server", "show", id, "-f", "value", "-c", "volumes_attached"); !strings.Contains(out, volID) {
		t.Fatalf("server volumes_attached: %s", out)
	}

	// Nova 2.85: the attachment's delete_on_termination changes in place.
	for _, flag := range []string{"--delete-on-termination", "--preserve-on-termination"} {
		mustOS(t, bin, env, "--os-compute-api-version", "2.85", "server", "volume", "update", flag, id, volID)
		out := mustOS(t, bin, env, "--os-compute-api-version", "2.85", "server", "volume", "list", id, "-f", "json")
		var atts []map[string]any
		if err := json.Unmarshal([]byte(out), &atts); err != nil || len(atts) != 1 || atts[0]["Delete On Termination?"] != (flag == "--delete-on-termination") {
			t.Fatalf("attachments after server volume update %s: %v %s", flag, err, out)
		}
	}

	// A second server cannot take a volume in use.
	if _, errOut, code := runOS(t, bin, env, "server", "add", "volume", id, "data"); code == 0 || !strings.Contains(errOut, "Invalid volume") {
		t.Fatalf("attaching an in-use volume: exit %d %s", code, errOut)
	}

	start = time.Now()
	mustOS(t, bin, env, "server", "remove", "volume", id, "data")
	waitCLIStatus(t, bin, env, "volume", "data", "available")
	t.Logf("detached in %v", time.Since(start))
	if x := domainXML(t, ns, id); strings.Contains(x, file) {
		t.Fatalf("the volume's file is still a disk of the domain:\n%s", x)
	}
	if out, err := exec.Command("qemu-img", "check", "-U", file).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img check of the detached volume: %v: %s", err, out)
	}
	mustOS(t, bin, env, "volume", "delete", "data")
}
