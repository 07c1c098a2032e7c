package client

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// sharedFinder is the fake driver with disks "left on shared storage"
// for every instance (found), as a libvirt host with shared_storage
// finds them.
type sharedFinder struct {
	*fake.Driver
	found []virt.ImportedDisk
}

func (d *sharedFinder) SharedDisks(ctx context.Context, id, imageID string) ([]virt.ImportedDisk, error) {
	out := make([]virt.ImportedDisk, len(d.found))
	copy(out, d.found)
	for i := range out {
		if out[i].Role == virt.DiskRoleRoot {
			out[i].BackingImageID = imageID
		}
	}
	return out, nil
}

// TestEvacuationFollowsTheDiskRule: an evacuation's destination builds
// on the disks its driver finds on shared storage when the rule lets it
// (detection, or on_shared_storage true), from the image when there are
// none, and fails with Nova's InvalidSharedStorage when the caller's
// on_shared_storage contradicts what the driver finds.
func TestEvacuationFollowsTheDiskRule(t *testing.T) {
	for _, c := range []struct {
		rule    string
		found   bool
		disks   int
		failure string
	}{
		{structs.EvacuateDiskDetect, true, 1, ""},
		{structs.EvacuateDiskDetect, false, 0, ""},
		{structs.EvacuateDiskShared, true, 1, ""},
		{structs.EvacuateDiskShared, false, 0, structs.InvalidSharedStorageMessage},
		{structs.EvacuateDiskImage, true, 0, structs.InvalidSharedStorageMessage},
		{structs.EvacuateDiskImage, false, 0, ""},
		{"", true, 0, ""}, // an older server's evacuation: from the image, unlooked
	} {
		h := newHarness(t, fake.Config{})
		root := virt.ImportedDisk{Role: virt.DiskRoleRoot, Format: "qcow2", Path: filepath.Join(t.TempDir(), "root"), Shared: true}
		if err := os.WriteFile(root.Path, []byte("what the guest wrote"), 0o600); err != nil {
			t.Fatal(err)
		}
		d := &sharedFinder{Driver: h.fake}
		if c.found {
			d.found = []virt.ImportedDisk{root}
		}
		h.driver = d
		cl := h.start()
		a := h.srv.addAllocWith(cl.HostID(), func(a *structs.Allocation, _ *structs.Instance) { a.EvacuateDisk = c.rule })
		if c.failure != "" {
			got := waitState(t, h.srv, a.ID, structs.AllocClientFailed)
			if got.ClientDescription != c.failure {
				t.Errorf("rule %q, found %v: failed with %q, want %q", c.rule, c.found, got.ClientDescription, c.failure)
			}
			continue
		}
		waitState(t, h.srv, a.ID, structs.AllocClientRunning)
		data, err := h.fake.Disk(a.InstanceID, virt.DiskRoleRoot)
		if err != nil {
			t.Fatal(err)
		}
		if kept := string(data) == "what the guest wrote"; kept != (c.disks == 1) {
			t.Errorf("rule %q, found %v: root disk %q, want the shared disk's data: %v", c.rule, c.found, data, c.disks == 1)
		}
		if _, err := os.Stat(root.Path); err != nil {
			t.Errorf("rule %q: the shared disk did not stay where it was: %v", c.rule, err)
		}
	}
}
