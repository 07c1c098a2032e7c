package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/imagedata"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
)

// TestGophercloudDrivesTheImageAPI registers, uploads, lists, updates,
// downloads and deletes an image as Terraform's OpenStack provider does,
// and boots a server from it.
func TestGophercloudDrivesTheImageAPI(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := startAgent(t, "gcimg", "--dev")
	compute, provider := computeClient(t, ctx, dev.http, "demo")
	image, err := openstack.NewImageV2(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatalf("image endpoint from the catalog: %v", err)
	}

	visibility := images.ImageVisibilityPrivate
	img, err := images.Create(ctx, image, images.CreateOpts{Name: "gc-img", DiskFormat: "raw", ContainerFormat: "bare",
		Visibility: &visibility, Tags: []string{"gc"}, Properties: map[string]string{"os_distro": "gophercloud"}}).Extract()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if img.Status != images.ImageStatusQueued || img.Properties["os_distro"] != "gophercloud" {
		t.Fatalf("created %+v", img)
	}
	data := bytes.Repeat([]byte("gophercloud "), 250_000)
	if err := imagedata.Upload(ctx, image, img.ID, bytes.NewReader(data)).ExtractErr(); err != nil {
		t.Fatalf("upload: %v", err)
	}
	got, err := images.Get(ctx, image, img.ID).Extract()
	sum := md5.Sum(data)
	if err != nil || got.Status != images.ImageStatusActive || got.SizeBytes != int64(len(data)) || got.Checksum != hex.EncodeToString(sum[:]) {
		t.Fatalf("after upload: %+v %v", got, err)
	}
	rc, err := imagedata.Download(ctx, image, img.ID).Extract()
	if err != nil {
		t.Fatalf("download: %v", err)
	}
	back, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(back, data) {
		t.Fatalf("downloaded %d bytes: %v", len(back), err)
	}

	// Pages of one image each: the dev image and this one.
	pages, err := images.List(image, images.ListOpts{Limit: 1}).AllPages(ctx)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	all, err := images.ExtractImages(pages)
	if err != nil || len(all) != 2 {
		t.Fatalf("listed %d images: %v", len(all), err)
	}
	updated, err := images.Update(ctx, image, img.ID, images.UpdateOpts{
		images.ReplaceImageName{NewName: "gc-img-2"},
		images.UpdateImageProperty{Op: images.AddOp, Name: "hw_architecture", Value: "x86_64"},
	}).Extract()
	if err != nil || updated.Name != "gc-img-2" || updated.Properties["hw_architecture"] != "x86_64" {
		t.Fatalf("update: %+v %v", updated, err)
	}

	// A server boots from it, by id.
	srv, err := servers.Create(ctx, compute, servers.CreateOpts{Name: "gc-img-vm", ImageRef: img.ID, FlavorRef: "1"}, nil).Extract()
	if err != nil {
		t.Fatalf("boot from the image: %v", err)
	}
	if err := servers.WaitForStatus(ctx, compute, srv.ID, "ACTIVE"); err != nil {
		t.Fatalf("server: %v", err)
	}
	shown, err := servers.Get(ctx, compute, srv.ID).Extract()
	if err != nil || shown.Image["id"] != img.ID {
		t.Fatalf("server image %+v %v", shown.Image, err)
	}
	// An unknown image is refused.
	_, err = servers.Create(ctx, compute, servers.CreateOpts{Name: "x", ImageRef: "00000000-0000-0000-0000-000000000000", FlavorRef: "1"}, nil).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		t.Fatalf("unknown image: %v", err)
	}

	if err := images.Delete(ctx, image, img.ID).ExtractErr(); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = images.Get(ctx, image, img.ID).Extract()
	var notFound gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &notFound) || notFound.Actual != http.StatusNotFound {
		t.Fatalf("get after delete: %v", err)
	}
}
