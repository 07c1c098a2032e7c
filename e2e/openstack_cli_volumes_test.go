package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenStackCLIVolumes drives the Block Storage API with the Debian
// python-openstackclient: volume create, list, show, set (extend),
// snapshot create, a volume from the snapshot, and deletes, with the
// pool's files gone at the end.
func TestOpenStackCLIVolumes(t *testing.T) {
	t.Parallel()
	bin := requireCLI(t, "openstack")
	dev, pool := storageDev(t, "osvol")
	env := osEnv(t, dev.http, "demo")

	var vol map[string]any
	osJSONVol(t, bin, env, &vol, "volume", "create", "--size", "1", "--property", "app=cli", "cli-vol")
	id, _ := vol["id"].(string)
	if id == "" || vol["size"] != float64(1) {
		t.Fatalf("volume create: %v", vol)
	}
	waitCLIStatus(t, bin, env, "volume", "cli-vol", "available")
	if out := mustOS(t, bin, env, "volume", "list", "-f", "value", "-c", "Name", "-c", "Status"); !strings.Contains(out, "cli-vol available") {
		t.Fatalf("volume list: %s", out)
	}
	if out := mustOS(t, bin, env, "volume", "type", "list", "-f", "value", "-c", "Name"); strings.TrimSpace(out) != "__DEFAULT__" {
		t.Fatalf("volume type list: %s", out)
	}
	if out := mustOS(t, bin, env, "availability", "zone", "list", "--volume", "-f", "value"); !strings.Contains(out, "nova available") {
		t.Fatalf("availability zone list --volume: %s", out)
	}
	if out := mustOS(t, bin, env, "limits", "show", "--absolute", "-f", "value"); !strings.Contains(out, "maxTotalVolumes") {
		t.Fatalf("limits show: %s", out)
	}
	mustOS(t, bin, env, "volume", "set", "--size", "2", "cli-vol")
	waitCLIStatus(t, bin, env, "volume", "cli-vol", "available")
	osJSONVol(t, bin, env, &vol, "volume", "show", "cli-vol")
	if vol["size"] != float64(2) || !strings.Contains(fmt.Sprint(vol["properties"]), "cli") {
		t.Fatalf("volume show after extend: %v", vol)
	}
	mustOS(t, bin, env, "volume", "snapshot", "create", "--volume", "cli-vol", "cli-snap")
	waitCLIStatus(t, bin, env, "volume snapshot", "cli-snap", "available")
	mustOS(t, bin, env, "volume", "create", "--snapshot", "cli-snap", "cli-restored")
	waitCLIStatus(t, bin, env, "volume", "cli-restored", "available")

	// Cinder's refusal of a volume with snapshots reaches the user.
	if _, errOut, code := runOS(t, bin, env, "volume", "delete", "cli-vol"); code == 0 || !strings.Contains(errOut, "Invalid volume") {
		t.Fatalf("delete of a volume with a snapshot: exit %d %s", code, errOut)
	}
	mustOS(t, bin, env, "volume", "snapshot", "delete", "cli-snap")
	eventually(t, "snapshot gone", 60*time.Second, func() error {
		if out := mustOS(t, bin, env, "volume", "snapshot", "list", "-f", "value", "-c", "Name"); strings.TrimSpace(out) != "" {
			return fmt.Errorf("snapshots left: %s", out)
		}
		return nil
	})
	mustOS(t, bin, env, "volume", "delete", "cli-vol", "cli-restored")
	eventually(t, "volumes gone", 60*time.Second, func() error {
		if out := mustOS(t, bin, env, "volume", "list", "-f", "value", "-c", "Name"); strings.TrimSpace(out) != "" {
			return fmt.Errorf("volumes left: %s", out)
		}
		if left, _ := filepath.Glob(filepath.Join(pool, "*.qcow2*")); len(left) != 0 {
			return fmt.Errorf("files left in the pool: %v", left)
		}
		return nil
	})
	if _, err := os.Stat(pool); err != nil {
		t.Fatalf("the pool directory went away: %v", err)
	}
}

// osJSONVol runs an openstack command with -f json into out.
func osJSONVol(t *testing.T, bin string, env []string, out any, args ...string) {
	t.Helper()
	raw := mustOS(t, bin, env, append(args, "-f", "json")...)
	if err := json.Unmarshal([]byte(raw), out); err != nil {
		t.Fatalf("openstack %s: %v: %s", strings.Join(args, " "), err, raw)
	}
}

// waitCLIStatus waits until `openstack <kind> show name` says status.
func waitCLIStatus(t *testing.T, bin string, env []string, kind, name, status string) {
	t.Helper()
	args := append(strings.Fields(kind), "show", "-f", "value", "-c", "status", name)
	eventually(t, kind+" "+name+" "+status, 60*time.Second, func() error {
		out, errOut, code := runOS(t, bin, env, args...)
		if code != 0 || strings.TrimSpace(out) != status {
			return fmt.Errorf("%s: %s %s", name, out, errOut)
		}
		return nil
	})
}
