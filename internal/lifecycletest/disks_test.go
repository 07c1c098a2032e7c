package lifecycletest

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// What the guest wrote follows the instance through the fake driver as
// through the libvirt one: these tests write a disk on one host and
// read it on the next, through the servers and the agents.

// diskHost adds a hypervisor whose fake keeps snapshots' data and, with
// shared set, shares that directory with the other such hosts.
func (c *cloud) diskHost(name, shared string) *hypervisor {
	c.t.Helper()
	return c.addHostWith(name, fake.Config{SpawnLatency: latency, DestroyLatency: latency / 2, PowerLatency: latency,
		SnapshotDir: c.t.TempDir(), SharedDir: shared})
}

// written is what the tests' guests write.
var written = bytes.Repeat([]byte("the guest wrote this before the move. "), 64)

// rootOn reads the instance's root disk on a host.
func rootOn(t *testing.T, hv *hypervisor, id string) []byte {
	t.Helper()
	data, err := hv.drv.Disk(id, virt.DiskRoleRoot)
	if err != nil {
		t.Fatalf("root disk of %s on %s: %v", id, hv.name, err)
	}
	return data
}

// sharedRoots maps each root disk file in dir to what it holds.
func sharedRoots(t *testing.T, dir, id string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), id+"+") && strings.HasSuffix(e.Name(), "-"+virt.DiskRoleRoot) {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = string(data)
		}
	}
	return out
}

// TestUnshelveRestoresTheShelvedDisk: shelve uploads the root disk to
// the image service, offload frees the host, and an unshelve on another
// host boots from that snapshot — the guest's data, not the original
// image — and then deletes the snapshot image, as Nova does.
func TestUnshelveRestoresTheShelvedDisk(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{})
	hv1 := c.diskHost("hv1", "")
	id := c.boot("vm", "m1.tiny")
	if err := hv1.drv.WriteDisk(id, virt.DiskRoleRoot, written); err != nil {
		t.Fatal(err)
	}
	c.mustTask(id, structs.OpShelve)
	inst := c.waitStatus(id, "SHELVED_OFFLOADED")
	snap := inst.SystemMetadata["shelved_image_id"]
	if snap == "" || len(hv1.instances(t)) != 0 {
		t.Fatalf("offloaded %+v", inst)
	}
	hv2 := c.diskHost("hv2", "")
	c.mustTask(id, structs.OpUnshelve, func(r *structs.InstanceTaskRequest) { r.TargetHost = "hv2" })
	inst = c.waitStatus(id, "ACTIVE")
	if c.hostName(inst.HostID) != "hv2" {
		t.Fatalf("unshelved on %s", c.hostName(inst.HostID))
	}
	if got := rootOn(t, hv2, id); !bytes.Equal(got, written) {
		t.Fatalf("root disk after the unshelve: %d bytes %.40q, want what the guest wrote before the shelve", len(got), got)
	}
	c.waitFor("the snapshot image deleted", func() error {
		var out structs.SingleImageResponse
		err := c.rpc("Image.Get", &structs.ImageSpecificRequest{ImageID: snap}, &out)
		if structs.KindOf(err) == structs.KindNotFound || (err == nil && out.Image.Status == structs.ImageDeleted) {
			return nil
		}
		return fmt.Errorf("snapshot image %s: %v %+v", snap, err, out.Image)
	})
}

// TestColdMigrateOntoSharedStorageKeepsTheSource: on storage both hosts
// share, a cold migration's destination builds the instance on disks of
// its own names with the guest's data and never writes the source's: a
// revert finds the source's disk as it was, and only a confirm deletes
// it. The destination takes the disk from the shared storage: no byte
// of it goes through the source's export.
func TestColdMigrateOntoSharedStorageKeepsTheSource(t *testing.T) {
	t.Parallel()
	shared := t.TempDir()
	c := newCloud(t, cloudOpts{})
	hv1 := c.diskHost("hv1", shared)
	id := c.boot("vm", "m1.tiny")
	hv2 := c.diskHost("hv2", shared)
	if err := hv1.drv.WriteDisk(id, virt.DiskRoleRoot, written); err != nil {
		t.Fatal(err)
	}
	source := sharedRoots(t, shared, id)
	if len(source) != 1 {
		t.Fatalf("source's root disks on shared storage: %v", source)
	}
	migrate := func() {
		t.Helper()
		c.mustTask(id, structs.OpMigrate)
		if inst := c.waitStatus(id, "VERIFY_RESIZE"); c.hostName(inst.HostID) != "hv2" {
			t.Fatalf("migrated to %s", c.hostName(inst.HostID))
		}
		if got := rootOn(t, hv2, id); !bytes.Equal(got, written) {
			t.Fatalf("destination's root disk %.40q, want the guest's data", got)
		}
		if err := hv2.drv.WriteDisk(id, virt.DiskRoleRoot, []byte("written on the destination")); err != nil {
			t.Fatal(err)
		}
		roots := sharedRoots(t, shared, id)
		for name, data := range source {
			if roots[name] != data {
				t.Fatalf("the destination changed the source's disk %s: %.40q", name, roots[name])
			}
		}
		if len(roots) != 2 {
			t.Fatalf("root disks during VERIFY_RESIZE: %v, want the source's and the destination's own", roots)
		}
		if n := hv1.export.Sent(); n != 0 {
			t.Fatalf("%d bytes of disk data went through the source's export, though the hosts share the storage", n)
		}
	}
	migrate()
	c.mustTask(id, structs.OpRevertResize)
	c.waitStatus(id, "ACTIVE")
	c.waitFor("the destination's disks deleted", func() error {
		if roots := sharedRoots(t, shared, id); len(roots) != 1 || roots[slices.Collect(maps.Keys(source))[0]] != string(written) {
			return fmt.Errorf("root disks after the revert: %v", roots)
		}
		return nil
	})
	if got := rootOn(t, hv1, id); !bytes.Equal(got, written) {
		t.Fatalf("source's root disk after the revert %.40q", got)
	}

	migrate()
	c.mustTask(id, structs.OpConfirmResize)
	c.waitStatus(id, "ACTIVE")
	c.waitFor("the source's disks deleted", func() error {
		roots := sharedRoots(t, shared, id)
		for name := range source {
			if _, ok := roots[name]; ok || len(roots) != 1 {
				return fmt.Errorf("root disks after the confirm: %v", roots)
			}
		}
		return nil
	})
}

// TestEvacuateFromSharedStorage: an evacuation's destination finds the
// disks the down host left on storage both share and rebuilds the
// instance on them (on_shared_storage), never writing the down host's
// files; when that host's agent comes back it destroys its own copy
// only. An evacuation that says the disk is shared when the destination
// shares nothing fails with Nova's InvalidSharedStorage.
func TestEvacuateFromSharedStorage(t *testing.T) {
	t.Parallel()
	shared := t.TempDir()
	c := newCloud(t, cloudOpts{})
	hv1 := c.diskHost("hv1", shared)
	id := c.boot("vm", "m1.tiny")
	c.diskHost("hv2", shared)
	if err := hv1.drv.WriteDisk(id, virt.DiskRoleRoot, written); err != nil {
		t.Fatal(err)
	}
	source := sharedRoots(t, shared, id)
	c.stopAgent("hv1")
	c.waitFor("hv1 down", func() error {
		if h := c.host("hv1"); h.Up() {
			return fmt.Errorf("hv1 still %s", h.Status)
		}
		return nil
	})
	yes := true
	c.mustTask(id, structs.OpEvacuate, func(r *structs.InstanceTaskRequest) { r.OnSharedStorage = &yes })
	inst := c.waitStatus(id, "ACTIVE")
	if c.hostName(inst.HostID) != "hv2" {
		t.Fatalf("evacuated to %s", c.hostName(inst.HostID))
	}
	if got := rootOn(t, c.hv("hv2"), id); !bytes.Equal(got, written) {
		t.Fatalf("evacuated root disk %.40q, want the guest's data from shared storage", got)
	}
	roots := sharedRoots(t, shared, id)
	for name, data := range source {
		if roots[name] != data {
			t.Fatalf("the evacuation changed the down host's disk %s", name)
		}
	}
	c.startAgent("hv1")
	c.waitFor("hv1's copy and files gone", func() error {
		roots := sharedRoots(t, shared, id)
		if len(hv1.instances(t)) != 0 || len(roots) != 1 {
			return fmt.Errorf("hv1 runs %d, root disks %v", len(hv1.instances(t)), roots)
		}
		for name := range source {
			if _, ok := roots[name]; ok {
				return fmt.Errorf("hv1's file %s outlived its copy", name)
			}
		}
		return nil
	})
	if got := rootOn(t, c.hv("hv2"), id); !bytes.Equal(got, written) {
		t.Fatal("hv1's clean-up touched the evacuated disk")
	}
}
