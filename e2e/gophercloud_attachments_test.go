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

// TestGophercloudDrivesLegacyVolumeActions drives Cinder's older attach
// actions with gophercloud, as clients did before the attachments API:
// reserve (once), unreserve, attach to an instance at a mountpoint,
// begin and roll back a detach, detach, and the connection calls, each
// moving the volume as Cinder does and refusing bad input in Cinder's
// words.
func TestGophercloudDrivesLegacyVolumeActions(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev, pool := storageDev(t, "gclegacy")
	c, _ := blockStorageClient(t, ctx, dev.http, "demo")
	vol, err := volumes.Create(ctx, c, volumes.CreateOpts{Size: 1, Name: "legacy-vol"}, nil).Extract()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := volumes.WaitForStatus(ctx, c, vol.ID, "available"); err != nil {
		t.Fatalf("wait available: %v", err)
	}
	status := func(want string) *volumes.Volume {
		t.Helper()
		got, err := volumes.Get(ctx, c, vol.ID).Extract()
		if err != nil || got.Status != want {
			t.Fatalf("volume %+v %v, want %s", got, err, want)
		}
		return got
	}
	if err := volumes.Reserve(ctx, c, vol.ID).ExtractErr(); err != nil {
		t.Fatalf("reserve: %v", err)
	}
	status("attaching")
	if err := volumes.Reserve(ctx, c, vol.ID).ExtractErr(); !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) ||
		!strings.Contains(err.Error(), "Volume status must be available to reserve, but the status is attaching.") {
		t.Fatalf("a second reserve: %v", err)
	}
	if err := volumes.Unreserve(ctx, c, vol.ID).ExtractErr(); err != nil {
		t.Fatalf("unreserve: %v", err)
	}
	status("available")

	info, err := volumes.InitializeConnection(ctx, c, vol.ID, volumes.InitializeConnectionOpts{Host: "edge-1", IP: "127.0.0.1"}).Extract()
	if err != nil {
		t.Fatalf("initialize connection: %v", err)
	}
	data, _ := info["data"].(map[string]any)
	if info["driver_volume_type"] != "file" || !strings.HasPrefix(data["device_path"].(string), pool) {
		t.Fatalf("connection info: %+v", info)
	}
	const server = "0b5e5f5c-1d2e-4a3b-8c4d-5e6f7a8b9c0d"
	err = volumes.Attach(ctx, c, vol.ID, volumes.AttachOpts{InstanceUUID: server, MountPoint: "/dev/vdc", Mode: "xx"}).ExtractErr()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "Attaching mode should be 'rw' or 'ro'") {
		t.Fatalf("attach with a bad mode: %v", err)
	}
	if err := volumes.Reserve(ctx, c, vol.ID).ExtractErr(); err != nil {
		t.Fatalf("reserve: %v", err)
	}
	if err := volumes.Attach(ctx, c, vol.ID, volumes.AttachOpts{InstanceUUID: server, MountPoint: "/dev/vdc", Mode: "rw"}).ExtractErr(); err != nil {
		t.Fatalf("attach: %v", err)
	}
	got := status("in-use")
	if len(got.Attachments) != 1 || got.Attachments[0].ServerID != server || got.Attachments[0].Device != "/dev/vdc" {
		t.Fatalf("attachments after os-attach: %+v", got.Attachments)
	}
	attID := got.Attachments[0].AttachmentID
	if err := volumes.BeginDetaching(ctx, c, vol.ID).ExtractErr(); err != nil {
		t.Fatalf("begin detaching: %v", err)
	}
	status("detaching")
	resp, err := c.Post(ctx, c.ServiceURL("volumes", vol.ID, "action"), map[string]any{"os-roll_detaching": map[string]any{}}, nil,
		&gophercloud.RequestOpts{OkCodes: []int{http.StatusAccepted}})
	if err != nil {
		t.Fatalf("roll detaching: %v", err)
	}
	resp.Body.Close()
	status("in-use")
	if err := volumes.Detach(ctx, c, vol.ID, volumes.DetachOpts{AttachmentID: attID}).ExtractErr(); err != nil {
		t.Fatalf("detach: %v", err)
	}
	if got := status("available"); len(got.Attachments) != 0 {
		t.Fatalf("attachments after os-detach: %+v", got.Attachments)
	}
	if err := volumes.BeginDetaching(ctx, c, vol.ID).ExtractErr(); !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) ||
		!strings.Contains(err.Error(), "Volume status must be 'in-use' and attach_status must be 'attached' to detach.") {
		t.Fatalf("begin detaching an available volume: %v", err)
	}
	if err := volumes.TerminateConnection(ctx, c, vol.ID, volumes.TerminateConnectionOpts{Host: "edge-1"}).ExtractErr(); err != nil {
		t.Fatalf("terminate connection: %v", err)
	}
	if err := volumes.Delete(ctx, c, vol.ID, volumes.DeleteOpts{}).ExtractErr(); err != nil {
		t.Fatalf("delete: %v", err)
	}
}
