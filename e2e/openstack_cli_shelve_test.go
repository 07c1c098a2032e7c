package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/qemutest"
)

// libvirtDevCLI starts a dev agent with the libvirt driver in a namespace
// of its own and returns the openstack CLI's environment and the pool's
// directory.
func libvirtDevCLI(t *testing.T, name string) (bin string, env []string, images, ns string) {
	return libvirtDevCLIWith(t, name, "")
}

// libvirtDevCLIWith is libvirtDevCLI with more of the client block
// (extra, HCL; %[1]s in it is the test's directory).
func libvirtDevCLIWith(t *testing.T, name, extra string) (bin string, env []string, images, ns string) {
	t.Helper()
	requireLibvirtd(t)
	dir := t.TempDir()
	rnd := make([]byte, 3)
	_, _ = rand.Read(rnd)
	ns = "e2e" + hex.EncodeToString(rnd)
	images = filepath.Join(dir, "images")
	config := filepath.Join(dir, "agent.hcl")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`
client {
  driver = "libvirt"
  libvirt {
    namespace  = %q
    images_dir = %q
  }
  image_cache {
    dir         = %q
    max_size_mb = 1024
  }
%s
}
`, ns, images, filepath.Join(dir, "cache"), strings.ReplaceAll(extra, "%[1]s", dir))), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeNamespace(ns) })
	bin, env, _ = devCLI(t, name, "--driver", "libvirt", "--config", config)
	return bin, env, images, ns
}

// rootDisk is the one root disk of server id in the pool.
func rootDisk(t *testing.T, images, ns, id string) string {
	t.Helper()
	roots, _ := filepath.Glob(filepath.Join(images, "stratus-"+ns+"-"+id+"+*-disk"))
	if len(roots) != 1 {
		t.Fatalf("root disks of %s in %s: %v", id, images, roots)
	}
	return roots[0]
}

func serverStatus(t *testing.T, bin string, env []string, id, want string) {
	t.Helper()
	eventually(t, "server "+want, 3*time.Minute, func() error {
		out, errOut, code := runOS(t, bin, env, "server", "show", id, "-f", "value", "-c", "status")
		if code != 0 {
			return fmt.Errorf("server show: %s", errOut)
		}
		if got := strings.TrimSpace(out); got != want {
			return fmt.Errorf("status %s", got)
		}
		return nil
	})
}

// TestOpenStackCLIShelveKeepsTheDisk: what the guest wrote survives
// `openstack server shelve` (offloaded at once: the host's copy is
// destroyed) and `openstack server unshelve`, through the shelve's
// snapshot image "<name>-shelved", which is deleted once the server runs
// again, as Nova does.
func TestOpenStackCLIShelveKeepsTheDisk(t *testing.T) {
	t.Parallel()
	bin, env, images, ns := libvirtDevCLI(t, "osshelve")
	disk := filepath.Join(t.TempDir(), "disk.qcow2")
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", disk, "64M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img create: %v: %s", err, out)
	}
	mustOS(t, bin, env, "image", "create", "--file", disk, "--disk-format", "qcow2", "--container-format", "bare", "shelve-disk")
	mustOS(t, bin, env, "flavor", "create", "--ram", "64", "--disk", "1", "--vcpus", "1", "shelve.tiny")
	var srv map[string]any
	osJSON(t, bin, env, &srv, "server", "create", "--image", "shelve-disk", "--flavor", "shelve.tiny", "--wait", "keeper")
	id, _ := srv["id"].(string)
	t.Cleanup(func() { _, _, _ = runOS(t, bin, env, "server", "delete", "--wait", id) })

	mustOS(t, bin, env, "server", "stop", id)
	serverStatus(t, bin, env, id, "SHUTOFF")
	root := rootDisk(t, images, ns, id)
	if out, ok := qemutest.Try(t, root, qemutest.Opts{}, "write -P 0xcd 1M 1M"); !ok {
		t.Fatalf("qemu-io write: %s", out)
	}

	mustOS(t, bin, env, "server", "shelve", id)
	serverStatus(t, bin, env, id, "SHELVED_OFFLOADED")
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("the offloaded server's disk is still on the host: %v", err)
	}
	var img map[string]any
	osJSON(t, bin, env, &img, "image", "show", "keeper-shelved")
	if img["status"] != "active" {
		t.Fatalf("the shelve's snapshot image: %v", img)
	}

	mustOS(t, bin, env, "server", "unshelve", id)
	serverStatus(t, bin, env, id, "ACTIVE")
	restored := rootDisk(t, images, ns, id)
	if out, ok := qemutest.Try(t, restored, qemutest.Opts{Share: true}, "read -P 0xcd 1M 1M"); !ok {
		t.Fatalf("the unshelved server's disk lost what the guest wrote: %s", out)
	}
	eventually(t, "the shelve's image deleted", time.Minute, func() error {
		if _, _, code := runOS(t, bin, env, "image", "show", "keeper-shelved"); code == 0 {
			return fmt.Errorf("image keeper-shelved still exists")
		}
		return nil
	})
}
