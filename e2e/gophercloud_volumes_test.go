package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/snapshots"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// storageDev starts a dev agent whose host keeps a 20 GB volume pool,
// and returns it with the pool's directory. qemu-img must be installed
// (a failure under CI=true).
func storageDev(t *testing.T, name string) (*agentProc, string) {
	t.Helper()
	if _, err := exec.LookPath("qemu-img"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("qemu-img (qemu-utils) is required under CI=true: %v", err)
		}
		t.Skip("qemu-img (qemu-utils) is not installed")
	}
	dir := t.TempDir()
	pool := filepath.Join(dir, "pool")
	config := filepath.Join(dir, "agent.hcl")
	hcl := fmt.Sprintf("client {\n  storage {\n    pool_dir    = %q\n    capacity_gb = 20\n  }\n}\n", pool)
	if err := os.WriteFile(config, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return startAgent(t, name, "--dev", "--config", config), pool
}

// blockStorageClient is the block-storage endpoint of the catalog, for
// user (whose password is its name), and the user's project.
func blockStorageClient(t *testing.T, ctx context.Context, base, user string) (*gophercloud.ServiceClient, string) {
	t.Helper()
	_, provider := computeClient(t, ctx, base, user)
	c, err := openstack.NewBlockStorageV3(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatalf("block-storage endpoint from the catalog: %v", err)
	}
	res, ok := provider.GetAuthResult().(tokens.CreateResult)
	if !ok {
		t.Fatalf("auth result %T", provider.GetAuthResult())
	}
	project, err := res.ExtractProject()
	if err != nil || project == nil {
		t.Fatalf("the token's project: %v", err)
	}
	return c, project.ID
}

// TestGophercloudDrivesTheBlockStorageAPI creates, lists, extends,
// snapshots, restores and deletes volumes with gophercloud's
// blockstorage v3 client, as Terraform's OpenStack provider does, and
// meets Cinder's quota refusal.
func TestGophercloudDrivesTheBlockStorageAPI(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev, pool := storageDev(t, "gcvol")
	c, project := blockStorageClient(t, ctx, dev.http, "demo")

	vol, err := volumes.Create(ctx, c, volumes.CreateOpts{Size: 1, Name: "gc-vol", Metadata: map[string]string{"app": "gc"}}, nil).Extract()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := volumes.WaitForStatus(ctx, c, vol.ID, "available"); err != nil {
		t.Fatalf("wait available: %v", err)
	}
	if _, err := os.Stat(filepath.Join(pool, "volume-"+vol.ID+".qcow2")); err != nil {
		t.Fatalf("the pool has no file for the volume: %v", err)
	}
	pages, err := volumes.List(c, volumes.ListOpts{Name: "gc-vol"}).AllPages(ctx)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	listed, err := volumes.ExtractVolumes(pages)
	if err != nil || len(listed) != 1 || listed[0].ID != vol.ID || listed[0].Metadata["app"] != "gc" || listed[0].VolumeType != "__DEFAULT__" {
		t.Fatalf("listed %+v: %v", listed, err)
	}

	if err := volumes.ExtendSize(ctx, c, vol.ID, volumes.ExtendSizeOpts{NewSize: 2}).ExtractErr(); err != nil {
		t.Fatalf("extend: %v", err)
	}
	if err := volumes.WaitForStatus(ctx, c, vol.ID, "available"); err != nil {
		t.Fatalf("wait extended: %v", err)
	}
	if got, err := volumes.Get(ctx, c, vol.ID).Extract(); err != nil || got.Size != 2 {
		t.Fatalf("extended volume %+v: %v", got, err)
	}

	snap, err := snapshots.Create(ctx, c, snapshots.CreateOpts{VolumeID: vol.ID, Name: "gc-snap"}).Extract()
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if err := snapshots.WaitForStatus(ctx, c, snap.ID, "available"); err != nil {
		t.Fatalf("wait snapshot: %v", err)
	}
	restored, err := volumes.Create(ctx, c, volumes.CreateOpts{SnapshotID: snap.ID, Name: "gc-restored"}, nil).Extract()
	if err != nil {
		t.Fatalf("create from snapshot: %v", err)
	}
	if err := volumes.WaitForStatus(ctx, c, restored.ID, "available"); err != nil {
		t.Fatalf("wait restored: %v", err)
	}
	if restored.Size != 2 || restored.SnapshotID != snap.ID {
		t.Fatalf("restored %+v", restored)
	}
	// Pages of one volume each, by the next links.
	pages, err = volumes.List(c, volumes.ListOpts{Limit: 1}).AllPages(ctx)
	if err != nil {
		t.Fatalf("paged list: %v", err)
	}
	if all, err := volumes.ExtractVolumes(pages); err != nil || len(all) != 2 || all[0].ID != restored.ID || all[1].ID != vol.ID {
		t.Fatalf("paged list, newest first: %+v %v", all, err)
	}

	// Deleting a volume that still has a snapshot: Cinder's 400.
	err = volumes.Delete(ctx, c, vol.ID, volumes.DeleteOpts{}).ExtractErr()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "Invalid volume: Volume status must be available or error") {
		t.Fatalf("delete of a volume with a snapshot: %v", err)
	}

	checkVolumeQuota(t, ctx, dev, c, project)

	deleteVolumesAndSnapshot(t, ctx, c, pool, snap.ID, vol.ID, restored.ID)
}

// waitGone waits until get answers 404.
func waitGone(ctx context.Context, get func() error) error {
	for {
		err := get()
		if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// checkVolumeQuota: the admin lowers the project's volumes to the two
// it has; a third is 413 with Cinder's message, and the usage shows.
func checkVolumeQuota(t *testing.T, ctx context.Context, dev *agentProc, c *gophercloud.ServiceClient, project string) {
	t.Helper()
	admin, _ := blockStorageClient(t, ctx, dev.http, "admin")
	two := 2
	if _, err := quotasets.Update(ctx, admin, project, quotasets.UpdateOpts{Volumes: &two}).Extract(); err != nil {
		t.Fatalf("quota update: %v", err)
	}
	_, err := volumes.Create(ctx, c, volumes.CreateOpts{Size: 1, Name: "one-too-many"}, nil).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusRequestEntityTooLarge) || !strings.Contains(err.Error(), "Maximum number of volumes allowed (2) exceeded for quota 'volumes'.") {
		t.Fatalf("create over quota: %v", err)
	}
	q, err := quotasets.GetUsage(ctx, c, project).Extract()
	if err != nil || q.Volumes.Limit != 2 || q.Volumes.InUse != 2 || q.Gigabytes.InUse != 6 {
		t.Fatalf("quota usage %+v: %v", q, err)
	}
}

// deleteVolumesAndSnapshot deletes the snapshot, then both volumes, and
// checks the pool has no file left.
func deleteVolumesAndSnapshot(t *testing.T, ctx context.Context, c *gophercloud.ServiceClient, pool, snapID, volID, restoredID string) {
	t.Helper()
	for _, del := range []func() error{
		func() error { return snapshots.Delete(ctx, c, snapID).ExtractErr() },
		func() error { return waitGone(ctx, func() error { return snapshots.Get(ctx, c, snapID).Err }) },
		func() error { return volumes.Delete(ctx, c, volID, volumes.DeleteOpts{}).ExtractErr() },
		func() error { return volumes.Delete(ctx, c, restoredID, volumes.DeleteOpts{}).ExtractErr() },
		func() error { return waitGone(ctx, func() error { return volumes.Get(ctx, c, volID).Err }) },
		func() error { return waitGone(ctx, func() error { return volumes.Get(ctx, c, restoredID).Err }) },
	} {
		if err := del(); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(pool, "*.qcow2*")); len(left) != 0 {
		t.Fatalf("files left in the pool: %v", left)
	}
}
