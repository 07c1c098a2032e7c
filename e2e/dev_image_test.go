package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// devImagePath is where scripts/build-dev-image.sh (run by make
// test-setup) leaves the bootable dev image.
const devImagePath = "../build/dev-image/stratus-dev.img"

// TestDevImageBootsOnLibvirt: a dev agent with the libvirt driver
// registers the bootable dev image, and a server booted from it through
// the openstack CLI runs its kernel and busybox to the end of its boot
// script, as its console log shows.
func TestDevImageBootsOnLibvirt(t *testing.T) {
	t.Parallel()
	requireLibvirtd(t)
	image, err := filepath.Abs(devImagePath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(image); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the dev image is missing (make test-setup builds it with scripts/build-dev-image.sh): %v", err)
		}
		t.Skipf("no dev image (scripts/build-dev-image.sh builds it): %v", err)
	}
	dir := t.TempDir()
	rnd := make([]byte, 3)
	_, _ = rand.Read(rnd)
	ns := "dev" + hex.EncodeToString(rnd)
	config := filepath.Join(dir, "agent.hcl")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`
dev_image = %q
client {
  driver = "libvirt"
  libvirt {
    namespace  = %q
    images_dir = %q
  }
  image_cache {
    dir = %q
  }
}
`, image, ns, filepath.Join(dir, "images"), filepath.Join(dir, "cache"))), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeNamespace(ns) })
	bin, env, _ := devCLI(t, "devimage", "--driver", "libvirt", "--config", config)

	// The image is seeded once the identity is: wait for it.
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, _, code := runOS(t, bin, env, "image", "show", "-f", "value", "-c", "status", "stratus-dev")
		if code == 0 && strings.TrimSpace(out) == "active" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("image stratus-dev never became active: %q", out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	mustOS(t, bin, env, "flavor", "create", "--ram", "256", "--disk", "1", "--vcpus", "1", "dev.small")
	var srv map[string]any
	osJSON(t, bin, env, &srv, "server", "create", "--image", "stratus-dev", "--flavor", "dev.small", "--wait", "vm")
	id, _ := srv["id"].(string)
	t.Cleanup(func() { _, _, _ = runOS(t, bin, env, "server", "delete", "--wait", id) })
	if srv["status"] != "ACTIVE" {
		t.Fatalf("server create --wait: %v", srv)
	}
	// TCG boots the kernel in seconds on an idle machine; allow for a
	// loaded one.
	deadline = time.Now().Add(4 * time.Minute)
	for {
		out, _, _ := runOS(t, bin, env, "console", "log", "show", id)
		if strings.Contains(out, "Stratus dev image: ready") {
			if !strings.Contains(out, "Stratus dev image: booted") {
				t.Fatalf("console log without the boot line:\n%s", out)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the guest did not finish booting; console log:\n%s", out)
		}
		time.Sleep(2 * time.Second)
	}
}
