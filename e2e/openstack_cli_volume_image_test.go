package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/qemutest"
)

// TestOpenStackCLIVolumeImageAndPurge: `openstack image create --volume`
// uploads a volume (with data written into its file) to a private image
// that a new volume is made from with the data; snapshot properties go
// through the snapshot metadata API; `openstack volume delete --purge`
// deletes a volume with its snapshots; nothing is left in the pool.
func TestOpenStackCLIVolumeImageAndPurge(t *testing.T) {
	t.Parallel()
	bin := requireCLI(t, "openstack")
	dev, pool := storageDev(t, "osvolimg")
	env := osEnv(t, dev.http, "demo")

	var vol map[string]any
	osJSONVol(t, bin, env, &vol, "volume", "create", "--size", "1", "cli-src")
	src, _ := vol["id"].(string)
	waitCLIStatus(t, bin, env, "volume", "cli-src", "available")
	qemutest.IO(t, filepath.Join(pool, "volume-"+src+".qcow2"), "write -P 0x5a 1M 64k")

	var up map[string]any
	osJSONVol(t, bin, env, &up, "image", "create", "--volume", "cli-src", "--disk-format", "qcow2", "cli-img")
	if up["image_name"] != "cli-img" || up["status"] != "uploading" || up["disk_format"] != "qcow2" || up["volume_type"] != "__DEFAULT__" {
		t.Fatalf("image create --volume: %v", up)
	}
	waitCLIStatus(t, bin, env, "image", "cli-img", "active")
	waitCLIStatus(t, bin, env, "volume", "cli-src", "available")
	// The CLI speaks volume API 3.0, before visibility: Glance's
	// default, shared, as with Cinder.
	if out := mustOS(t, bin, env, "image", "show", "-f", "value", "-c", "visibility", "-c", "disk_format", "cli-img"); strings.Join(strings.Fields(out), " ") != "qcow2 shared" {
		t.Fatalf("image show: %s", out)
	}
	osJSONVol(t, bin, env, &vol, "volume", "create", "--size", "1", "--image", "cli-img", "cli-copy")
	copyID, _ := vol["id"].(string)
	waitCLIStatus(t, bin, env, "volume", "cli-copy", "available")
	if out, ok := qemutest.Try(t, filepath.Join(pool, "volume-"+copyID+".qcow2"), qemutest.Opts{}, "read -P 0x5a 1M 64k"); !ok {
		t.Fatalf("the volume from the uploaded image lacks the data: %s", out)
	}

	// Snapshot properties are the snapshot metadata API.
	mustOS(t, bin, env, "volume", "snapshot", "create", "--volume", "cli-src", "--property", "a=1", "cli-snap")
	waitCLIStatus(t, bin, env, "volume snapshot", "cli-snap", "available")
	mustOS(t, bin, env, "volume", "snapshot", "set", "--property", "b=2", "cli-snap")
	mustOS(t, bin, env, "volume", "snapshot", "unset", "--property", "a", "cli-snap")
	if out := mustOS(t, bin, env, "volume", "snapshot", "show", "-f", "value", "-c", "properties", "cli-snap"); !strings.Contains(out, "b") || strings.Contains(out, "'a'") || strings.Contains(out, "a=") {
		t.Fatalf("snapshot properties: %s", out)
	}

	// --purge is the cascade delete.
	mustOS(t, bin, env, "volume", "delete", "--purge", "cli-src")
	mustOS(t, bin, env, "volume", "delete", "cli-copy")
	mustOS(t, bin, env, "image", "delete", "cli-img")
	eventually(t, "volumes and snapshots gone", 60*time.Second, func() error {
		if out := mustOS(t, bin, env, "volume", "snapshot", "list", "-f", "value", "-c", "Name"); strings.TrimSpace(out) != "" {
			return fmt.Errorf("snapshots left: %s", out)
		}
		if out := mustOS(t, bin, env, "volume", "list", "-f", "value", "-c", "Name"); strings.TrimSpace(out) != "" {
			return fmt.Errorf("volumes left: %s", out)
		}
		if left, _ := filepath.Glob(filepath.Join(pool, "*.qcow2*")); len(left) != 0 {
			return fmt.Errorf("files left in the pool: %v", left)
		}
		return nil
	})
}
