package nova

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/internal/clienttest"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// addSnapshotHost starts a fake-driver agent that can upload snapshots.
func addSnapshotHost(t *testing.T, s *server.Server, name string) {
	t.Helper()
	drv := fake.New(fake.Config{HostName: name})
	runFakeAgent(t, s, client.Config{NodeName: name, Driver: drv, ImageUploader: uploaderTo(s)}, nil)
}

// waitImage waits until an image has status ("" for gone) and returns it.
func waitImage(t *testing.T, s *server.Server, id, status string) *structs.Image {
	t.Helper()
	var img *structs.Image
	waitFor(t, "image "+id+" "+status, func() error {
		var out structs.SingleImageResponse
		err := s.RPC("Image.Get", &structs.ImageSpecificRequest{ImageID: id}, &out)
		if status == "" {
			if structs.KindOf(err) == structs.KindNotFound {
				return nil
			}
			return fmt.Errorf("still there: %v", err)
		}
		if err != nil {
			return err
		}
		if img = out.Image; img.Status != status {
			return fmt.Errorf("status %s", img.Status)
		}
		return nil
	})
	return img
}

// TestCreateImageAndBackup drives createImage and createBackup through a
// real server and a fake-driver agent: Nova's answers per microversion,
// the image's record and data, backup rotation, validation and refusals.
func TestCreateImageAndBackup(t *testing.T) {
	h, s := newRealHarness(t)
	addSnapshotHost(t, s, "hv-snap")
	waitFor(t, "host up", func() error {
		var out structs.HostListResponse
		if err := s.RPC("Host.List", &structs.HostListRequest{}, &out); err != nil {
			return err
		}
		if len(out.Hosts) != 1 || !out.Hosts[0].Up() {
			return fmt.Errorf("hosts %v", out.Hosts)
		}
		return nil
	})
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1", "metadata": map[string]any{}}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")

	// Before 2.45: 202 and the image's Location.
	r = act(h, id, memberTok, "", `{"createImage": {"name": "snap-1", "metadata": {"purpose": "test"}}}`).expect(t, 202)
	loc := r.header.Get("Location")
	imageID := loc[strings.LastIndex(loc, "/")+1:]
	if !strings.Contains(loc, "/image/v2/images/") || len(imageID) != 36 || len(r.raw) != 0 {
		t.Fatalf("createImage at 2.1: Location %q body %q", loc, r.raw)
	}
	img := waitImage(t, s, imageID, structs.ImageActive)
	p := img.Properties
	if img.Name != "snap-1" || img.Owner != "p-demo" || img.Visibility != structs.ImagePrivate || img.DiskFormat != "qcow2" ||
		img.Size == 0 || img.HashValue == "" || p["purpose"] != "test" || p["image_type"] != "snapshot" ||
		p["instance_uuid"] != id || p["user_id"] != "u-alice" || p["base_image_ref"] != "cirros" {
		t.Fatalf("snapshot image %+v", img)
	}
	waitServer(h, id, "ACTIVE")

	// From 2.45: still 202, and the image id in the body.
	r = act(h, id, memberTok, "2.45", `{"createImage": {"name": "snap-2"}}`).expect(t, 202)
	if imageID, _ = r.body["image_id"].(string); imageID == "" || r.header.Get("Location") != "" {
		t.Fatalf("createImage at 2.45: %s", r.raw)
	}
	waitImage(t, s, imageID, structs.ImageActive)
	waitServer(h, id, "ACTIVE")

	// Backups rotate: with rotation 1 the older one goes.
	var backups []string
	for _, name := range []string{"b-1", "b-2"} {
		r = act(h, id, memberTok, "2.45", `{"createBackup": {"name": "`+name+`", "backup_type": "daily", "rotation": "1"}}`).expect(t, 202)
		backups = append(backups, r.body["image_id"].(string))
		waitServer(h, id, "ACTIVE")
	}
	waitImage(t, s, backups[0], "")
	if b := waitImage(t, s, backups[1], structs.ImageActive); b.Properties["backup_type"] != "daily" || b.Properties["image_type"] != "backup" {
		t.Fatalf("backup image %+v", b)
	}

	// Bodies as strict as Nova's.
	for body, msg := range map[string]string{
		`{"createImage": {}}`:                                                 "'name' is a required property",
		`{"createImage": {"name": ""}}`:                                       "name",
		`{"createImage": {"name": "x", "y": 1}}`:                              "Additional properties are not allowed",
		`{"createBackup": {"name": "x"}}`:                                     "'backup_type' is a required property",
		`{"createBackup": {"name": "x", "backup_type": "d", "rotation": -1}}`: "rotation",
	} {
		act(h, id, memberTok, "2.45", body).fault(t, 400, "badRequest", msg)
	}
	// A refused snapshot leaves no image behind.
	act(h, id, memberTok, "", `{"rescue": null}`).expect(t, 200)
	waitServer(h, id, "RESCUE")
	act(h, id, memberTok, "2.45", `{"createImage": {"name": "refused"}}`).fault(t, 409, "conflictingRequest",
		"Cannot 'createImage' instance "+id+" while it is in vm_state rescued")
	var list structs.ImageListResponse
	if err := s.RPC("Image.List", &structs.ImageListRequest{}, &list); err != nil {
		t.Fatal(err)
	}
	for _, im := range list.Images {
		if im.Name == "refused" {
			t.Fatalf("a refused snapshot left its image: %+v", im)
		}
	}
	// Another project's server is not found.
	act(h, id, otherTok, "", `{"createImage": {"name": "x"}}`).expect(t, 404)
}

// uploaderTo uploads snapshots to s's image store, as the agent does.
func uploaderTo(s *server.Server) clienttest.Uploader {
	return clienttest.Uploader{Server: func() *server.Server { return s }}
}
