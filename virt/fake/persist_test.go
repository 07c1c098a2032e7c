package fake

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/virttest"
)

func TestOpenPersistsInstancesAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hv.json")
	d, err := Open(Config{StatePath: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Spawn(ctx, &virt.InstanceSpec{ID: "a", VCPUs: 1, MemoryMB: 64}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Spawn(ctx, &virt.InstanceSpec{ID: "b", VCPUs: 1, MemoryMB: 64}); err != nil {
		t.Fatal(err)
	}
	if err := d.PowerOff(ctx, "b", 0); err != nil {
		t.Fatal(err)
	}
	if err := d.Destroy(ctx, "a"); err != nil {
		t.Fatal(err)
	}

	// A new driver on the same file sees the same hypervisor.
	again, err := Open(Config{StatePath: path})
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := again.ListInstances(ctx)
	if len(ids) != 1 || ids[0] != "b" {
		t.Fatalf("after reopen: %v", ids)
	}
	info, err := again.GetInfo(ctx, "b")
	if err != nil || info.PowerState != virt.PowerShutdown {
		t.Fatalf("b after reopen: %+v %v", info, err)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Config{StatePath: path}); err == nil {
		t.Fatal("corrupt state file accepted")
	}
	if _, err := Open(Config{}); err == nil {
		t.Fatal("Open without a path accepted")
	}
}

// TestOpenPersistsRescueAndMigration: a rescued instance is still rescued
// after a restart, and one that live-migrated away does not come back.
func TestOpenPersistsRescueAndMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hv.json")
	d, err := Open(Config{StatePath: path})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := d.Spawn(ctx, &virt.InstanceSpec{ID: id, VCPUs: 1, MemoryMB: 64, ImageID: "cirros"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Rescue(ctx, "a", virt.RescueSpec{Image: "rescue-img"}); err != nil {
		t.Fatal(err)
	}
	if err := d.LiveMigrate(ctx, "b", "hv-2"); err != nil {
		t.Fatal(err)
	}
	again, err := Open(Config{StatePath: path})
	if err != nil {
		t.Fatal(err)
	}
	if ids, _ := again.ListInstances(ctx); len(ids) != 1 || ids[0] != "a" {
		t.Fatalf("after reopen: %v, want only a (b left)", ids)
	}
	if rescued, img, err := again.Rescued("a"); err != nil || !rescued || img != "rescue-img" {
		t.Fatalf("a after reopen: rescued %v from %q, %v", rescued, img, err)
	}
	if err := again.Unrescue(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	third, err := Open(Config{StatePath: path})
	if err != nil {
		t.Fatal(err)
	}
	if rescued, _, _ := third.Rescued("a"); rescued {
		t.Fatal("unrescue did not persist")
	}
}

func TestPersistentFakeConforms(t *testing.T) {
	virttest.Run(t, virttest.Harness{
		New: func(t *testing.T) virt.Driver {
			d, err := Open(Config{StatePath: filepath.Join(t.TempDir(), "hv.json")})
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
		Spec: func(t *testing.T, id string) *virt.InstanceSpec {
			return &virt.InstanceSpec{ID: id, Name: id, VCPUs: 1, MemoryMB: 64, RootGB: 1}
		},
		MigrationDestination: "fake-host-2",
	})
}
