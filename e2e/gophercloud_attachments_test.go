package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/attachments"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
)

// TestGophercloudDrivesVolumeAttachments walks a volume through the
// Block Storage attachments API (3.27+, os-complete 3.44) with
// gophercloud, as an external consumer (a bare-metal or container
// host) would: create reserves the volume, a second reservation is
// refused with Cinder's message, update with a connector answers the
// connection info (the volume's file), complete makes the volume
// in-use, the volume shows the attachment, and delete frees it. Below
// 3.27 the API is not there.
func TestGophercloudDrivesVolumeAttachments(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev, pool := storageDev(t, "gcatt")
	c, _ := blockStorageClient(t, ctx, dev.http, "demo")
	vol, err := volumes.Create(ctx, c, volumes.CreateOpts{Size: 1, Name: "att-vol"}, nil).Extract()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := volumes.WaitForStatus(ctx, c, vol.ID, "available"); err != nil {
		t.Fatalf("wait available: %v", err)
	}

	if _, err := attachments.Create(ctx, c, attachments.CreateOpts{VolumeUUID: vol.ID, InstanceUUID: "host-1"}).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("attachments at 3.0: %v", err)
	}
	c.Microversion = "3.44"
	const server = "6d1c6e0e-0a5c-4f7e-9d55-0c0e8d4a2b11"
	att, err := attachments.Create(ctx, c, attachments.CreateOpts{VolumeUUID: vol.ID, InstanceUUID: server}).Extract()
	if err != nil {
		t.Fatalf("reserve: %v", err)
	}
	if att.Status != "reserved" || att.VolumeID != vol.ID || att.Instance != server || att.ConnectionInfo != nil {
		t.Fatalf("reserved attachment: %+v", att)
	}
	if got, err := volumes.Get(ctx, c, vol.ID).Extract(); err != nil || got.Status != "reserved" {
		t.Fatalf("volume after the reserve: %+v %v", got, err)
	}
	_, err = attachments.Create(ctx, c, attachments.CreateOpts{VolumeUUID: vol.ID, InstanceUUID: server}).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "status must be available or downloading to reserve, but the current status is reserved") {
		t.Fatalf("a second reservation: %v", err)
	}

	att, err = attachments.Update(ctx, c, att.ID, attachments.UpdateOpts{Connector: map[string]any{
		"host": "edge-1", "mountpoint": "/dev/vdb", "multipath": false}}).Extract()
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	data, _ := att.ConnectionInfo["data"].(map[string]any)
	if att.Status != "attaching" || att.ConnectionInfo["driver_volume_type"] != "file" || !strings.HasPrefix(data["device_path"].(string), pool) {
		t.Fatalf("attachment with a connector: %+v", att)
	}
	if err := attachments.Complete(ctx, c, att.ID).ExtractErr(); err != nil {
		t.Fatalf("complete: %v", err)
	}
	got, err := volumes.Get(ctx, c, vol.ID).Extract()
	if err != nil || got.Status != "in-use" || len(got.Attachments) != 1 || got.Attachments[0].AttachmentID != att.ID || got.Attachments[0].Device != "/dev/vdb" {
		t.Fatalf("volume after the complete: %+v %v", got, err)
	}
	pages, err := attachments.List(c, attachments.ListOpts{VolumeID: vol.ID}).AllPages(ctx)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if all, err := attachments.ExtractAttachments(pages); err != nil || len(all) != 1 || all[0].Status != "attached" || all[0].AttachedAt.IsZero() {
		t.Fatalf("listed: %+v %v", all, err)
	}
	err = volumes.Delete(ctx, c, vol.ID, volumes.DeleteOpts{}).ExtractErr()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		t.Fatalf("delete of an attached volume: %v", err)
	}

	if err := attachments.Delete(ctx, c, att.ID).ExtractErr(); err != nil {
		t.Fatalf("delete the attachment: %v", err)
	}
	if got, err := volumes.Get(ctx, c, vol.ID).Extract(); err != nil || got.Status != "available" || len(got.Attachments) != 0 {
		t.Fatalf("volume after the attachment's delete: %+v %v", got, err)
	}
	if _, err := attachments.Get(ctx, c, att.ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("a deleted attachment: %v", err)
	}
	if err := volumes.Delete(ctx, c, vol.ID, volumes.DeleteOpts{}).ExtractErr(); err != nil {
		t.Fatalf("delete the volume: %v", err)
	}
	if err := waitGone(ctx, func() error { return volumes.Get(ctx, c, vol.ID).Err }); err != nil {
		t.Fatalf("volume gone: %v", err)
	}
}
