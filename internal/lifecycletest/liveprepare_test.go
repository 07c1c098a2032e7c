package lifecycletest

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/clienttest"
	"github.com/stratus-cloud/stratus/structs"
)

// imageWith creates an active image whose data is data.
func (c *cloud) imageWith(data []byte) *structs.Image {
	c.t.Helper()
	var out structs.SingleImageResponse
	if err := c.rpc("Image.Create", &structs.ImageCreateRequest{Image: &structs.Image{Name: "img", DiskFormat: "raw",
		ContainerFormat: "bare", Owner: "p1", Visibility: structs.ImagePublic}}, &out); err != nil {
		c.t.Fatal(err)
	}
	if err := (clienttest.Uploader{Server: c.leader}).Upload(c.t.Context(), out.Image.ID, int64(len(data)), bytes.NewReader(data)); err != nil {
		c.t.Fatal(err)
	}
	return out.Image
}

// bootFrom creates an instance of image imageID and waits for ACTIVE.
func (c *cloud) bootFrom(name, imageID string) string {
	c.t.Helper()
	var out structs.InstanceCreateResponse
	if err := c.rpc("Instance.Create", &structs.InstanceCreateRequest{Name: name, FlavorID: "m1.tiny", ImageID: imageID,
		ProjectID: "p1", UserID: "u1", RequestID: "req-create-" + name}, &out); err != nil {
		c.t.Fatalf("create %s: %v", name, err)
	}
	id := out.Instances[0].ID
	c.waitStatus(id, "ACTIVE")
	return id
}

// TestLiveMigrationDestinationDiesWhilePreparing: the destination's
// agent dies while it fetches the instance's image for an incoming live
// migration. The source never sends the guest: the migration fails, the
// instance stays ACTIVE on its host, the destination is freed. Once the
// destination's agent is back the same migration goes through, the
// source's driver getting the destination's cached image file.
func TestLiveMigrationDestinationDiesWhilePreparing(t *testing.T) {
	t.Parallel()
	c := newCloud(t, cloudOpts{hosts: []string{"hv1"}})
	img := c.imageWith(bytes.Repeat([]byte("image data "), 4096))
	id := c.bootFrom("vm", img.ID)
	hv1 := c.hv("hv1")
	hv2 := c.addHost("hv2")
	hold := make(chan struct{})
	hv2.hold.Store(&hold)
	t.Cleanup(func() {
		if hv2.hold.Load() != nil {
			close(hold)
		}
	})

	c.mustTask(id, structs.OpLiveMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = "hv2" })
	select {
	case <-hv2.fetching:
	case <-time.After(30 * time.Second):
		t.Fatal("the destination never started fetching the image")
	}
	c.stopAgent("hv2")
	inst := c.waitStatus(id, "ACTIVE")
	if c.hostName(inst.HostID) != "hv1" || len(hv1.instances(t)) != 1 || hv1.drv.Calls("LiveMigrate") != 0 {
		t.Fatalf("after the failed prepare: on %s, hv1 runs %v, %d migrations sent", c.hostName(inst.HostID), hv1.instances(t), hv1.drv.Calls("LiveMigrate"))
	}
	if m := c.migrations(id); len(m) != 1 || m[0].Status != structs.MigrationFailed {
		t.Fatalf("migrations %+v", m)
	}
	c.waitFor("the destination freed", func() error {
		if u := c.usage("hv2", structs.ResourceVCPU); u != 0 {
			return fmt.Errorf("hv2 still holds %d vcpus", u)
		}
		return nil
	})

	hv2.hold.Store(nil)
	close(hold)
	c.startAgent("hv2")
	c.waitFor("hv2 up", func() error {
		if h := c.host("hv2"); h == nil || !h.Up() {
			return fmt.Errorf("hv2: %+v", h)
		}
		return nil
	})
	c.mustTask(id, structs.OpLiveMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = "hv2" })
	c.waitFor("on hv2", func() error {
		if inst := c.waitStatus(id, "ACTIVE"); c.hostName(inst.HostID) != "hv2" {
			return fmt.Errorf("on %s", c.hostName(inst.HostID))
		}
		return nil
	})
	if to := hv1.drv.MigrationTarget(id); to.ImagePath == "" || !bytes.HasPrefix([]byte(to.ImagePath), []byte(hv2.dataDir)) {
		t.Fatalf("migration target %+v, want hv2's cached image under %s", to, hv2.dataDir)
	}
}
