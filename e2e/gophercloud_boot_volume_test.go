package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/snapshots"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
)

// TestGophercloudBootsFromVolumes boots servers from volumes with
// gophercloud's block_device_mapping_v2, as Terraform's OpenStack
// provider does: one from a volume made of the cirros image with a
// blank data volume beside it (deleted with the server), then, from a
// snapshot of the first root volume, a second one whose volume goes
// with it.
func TestGophercloudBootsFromVolumes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dev, _ := storageDev(t, "gcbfv")
	compute, provider := computeClient(t, ctx, dev.http, "demo")
	bs, _ := blockStorageClient(t, ctx, dev.http, "demo")
	imageClient, err := openstack.NewImageV2(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := images.List(imageClient, images.ListOpts{Name: "cirros"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := images.ExtractImages(pages)
	if err != nil || len(imgs) != 1 {
		t.Fatalf("cirros: %v %v", imgs, err)
	}

	srv, err := servers.Create(ctx, compute, servers.CreateOpts{Name: "gc-bfv", FlavorRef: "1", BlockDevice: []servers.BlockDevice{
		{SourceType: servers.SourceImage, UUID: imgs[0].ID, DestinationType: servers.DestinationVolume, VolumeSize: 1, BootIndex: 0},
		{SourceType: servers.SourceBlank, DestinationType: servers.DestinationVolume, VolumeSize: 1, BootIndex: -1, DeleteOnTermination: true},
	}}, nil).Extract()
	if err != nil {
		t.Fatalf("boot from an image's volume: %v", err)
	}
	if err := servers.WaitForStatus(ctx, compute, srv.ID, "ACTIVE"); err != nil {
		t.Fatalf("wait ACTIVE: %v", err)
	}
	got, err := servers.Get(ctx, compute, srv.ID).Extract()
	if err != nil || len(got.AttachedVolumes) != 2 || len(got.Image) != 0 {
		t.Fatalf("server %+v: %v", got, err)
	}
	var root, data *volumes.Volume
	for _, av := range got.AttachedVolumes {
		v, err := volumes.Get(ctx, bs, av.ID).Extract()
		if err != nil || v.Status != "in-use" || len(v.Attachments) != 1 {
			t.Fatalf("attached volume %+v: %v", v, err)
		}
		if v.Attachments[0].Device == "/dev/vda" {
			root = v
		} else {
			data = v
		}
	}
	if root == nil || data == nil || root.Bootable != "true" || root.VolumeImageMetadata["image_id"] != imgs[0].ID {
		t.Fatalf("root %+v data %+v", root, data)
	}

	if err := servers.Delete(ctx, compute, srv.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if err := waitGone(ctx, func() error { return servers.Get(ctx, compute, srv.ID).Err }); err != nil {
		t.Fatalf("server gone: %v", err)
	}
	if err := volumes.WaitForStatus(ctx, bs, root.ID, "available"); err != nil {
		t.Fatalf("the root volume after its server: %v", err)
	}
	if err := waitGone(ctx, func() error { return volumes.Get(ctx, bs, data.ID).Err }); err != nil {
		t.Fatalf("the delete_on_termination volume: %v", err)
	}

	snap, err := snapshots.Create(ctx, bs, snapshots.CreateOpts{VolumeID: root.ID, Name: "gc-root-snap"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if err := snapshots.WaitForStatus(ctx, bs, snap.ID, "available"); err != nil {
		t.Fatal(err)
	}
	srv, err = servers.Create(ctx, compute, servers.CreateOpts{Name: "gc-bfs", FlavorRef: "1", BlockDevice: []servers.BlockDevice{
		{SourceType: servers.SourceSnapshot, UUID: snap.ID, DestinationType: servers.DestinationVolume, BootIndex: 0, DeleteOnTermination: true},
	}}, nil).Extract()
	if err != nil {
		t.Fatalf("boot from a snapshot's volume: %v", err)
	}
	if err := servers.WaitForStatus(ctx, compute, srv.ID, "ACTIVE"); err != nil {
		t.Fatalf("wait ACTIVE: %v", err)
	}
	got, err = servers.Get(ctx, compute, srv.ID).Extract()
	if err != nil || len(got.AttachedVolumes) != 1 {
		t.Fatalf("server %+v: %v", got, err)
	}
	restored := got.AttachedVolumes[0].ID
	if v, err := volumes.Get(ctx, bs, restored).Extract(); err != nil || v.SnapshotID != snap.ID || v.Size != 1 {
		t.Fatalf("the snapshot's volume %+v: %v", v, err)
	}
	if err := servers.Delete(ctx, compute, srv.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if err := waitGone(ctx, func() error { return volumes.Get(ctx, bs, restored).Err }); err != nil {
		t.Fatalf("the snapshot's volume after its server: %v", err)
	}
	if err := snapshots.Delete(ctx, bs, snap.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if err := waitGone(ctx, func() error { return snapshots.Get(ctx, bs, snap.ID).Err }); err != nil {
		t.Fatal(err)
	}
	if err := volumes.Delete(ctx, bs, root.ID, volumes.DeleteOpts{}).ExtractErr(); err != nil {
		t.Fatal(err)
	}
}
