package command

import (
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/api"
)

// TestInstanceSnapshotAgainstDevAgent: cloudctl instance snapshot
// follows the snapshot through its task states to an active image, on a
// real dev agent (fake driver); a backup with rotation 1 keeps one.
func TestInstanceSnapshotAgainstDevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	c := readyDevAgent(t)
	runOK(t, "instance", "create", "-flavor", "m1.tiny", "-image", "cirros", "-wait", "web")

	out := runOK(t, "instance", "snapshot", "-property", "purpose=test", "web", "web-snap")
	assertContains(t, "snapshot", untimed(out), "==> Image \"web-snap\": ", "task image_snapshot",
		"Event compute_snapshot_instance: Success\n", "finished: the instance is ACTIVE\n")
	img, _, err := c.Images().Info("web-snap", nil)
	if err != nil {
		t.Fatal(err)
	}
	if img.Status != "active" || img.DiskFormat != "qcow2" || img.Size == 0 || img.Properties["purpose"] != "test" ||
		img.Properties["image_type"] != "snapshot" || img.Visibility != "private" {
		t.Fatalf("snapshot image: %+v", img)
	}

	for _, name := range []string{"b1", "b2"} {
		out = runOK(t, "instance", "snapshot", "-backup-type", "weekly", "-rotation", "1", "web", name)
		assertContains(t, "backup", untimed(out), "task image_backup", "Event compute_backup_instance: Success\n")
	}
	if _, _, err := c.Images().Info("b1", nil); !api.IsNotFound(err) {
		t.Fatalf("the rotated-out backup: %v", err)
	}
	if img, _, err := c.Images().Info("b2", nil); err != nil || img.Properties["backup_type"] != "weekly" {
		t.Fatalf("the kept backup: %+v %v", img, err)
	}
	if _, errOut, code := run(t, "instance", "snapshot", "-rotation", "2", "web", "x"); code != 2 || !strings.Contains(errOut, "-backup-type") {
		t.Errorf("rotation without a backup type: exit %d %q", code, errOut)
	}
	out = runOK(t, "instance", "snapshot", "-detach", "web", "detached")
	if !strings.Contains(out, "Requested a snapshot of instance") {
		t.Errorf("detached snapshot: %q", out)
	}
}
