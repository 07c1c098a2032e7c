package agent

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/internal/qemutest"
)

// TestVolumeUploadToImage is `openstack image create --volume`: the
// real storage agent converts the volume's file with qemu-img and
// uploads it to the image store; a volume made from the new image has
// the data written into the first volume.
func TestVolumeUploadToImage(t *testing.T) {
	t.Parallel()
	a, pool := volumeAgent(t)
	demo := keystoneToken(t, a, "demo")
	project := projectOf(t, a, demo)
	base := "/volume/v3/" + project
	src := createVolume(t, a, base, demo, map[string]any{"size": 1, "name": "src", "description": "d"})
	qemutest.IO(t, filepath.Join(pool, "volume-"+src+".qcow2"), "write -P 0xab 0 64k")
	action := base + "/volumes/" + src + "/action"

	// Cinder's schema and policy refusals.
	upload := func(version string, params map[string]any) volumeResp {
		return volumeCall(t, a, "POST", action, demo, version, map[string]any{"os-volume_upload_image": params})
	}
	upload("3.1", map[string]any{"disk_format": "qcow2"}).fault(t, http.StatusBadRequest, "badRequest", "'image_name' is a required property")
	upload("3.1", map[string]any{"image_name": "x", "disk_format": "iso"}).fault(t, http.StatusBadRequest, "badRequest",
		"'iso' is not one of ['raw', 'vmdk', 'vdi', 'qcow2', 'vhd', 'vhdx', 'ploop']")
	upload("3.0", map[string]any{"image_name": "x", "visibility": "private"}).fault(t, http.StatusBadRequest, "badRequest",
		"Additional properties are not allowed ('visibility' was unexpected)")
	upload("3.1", map[string]any{"image_name": "x", "visibility": "public"}).fault(t, http.StatusForbidden, "forbidden",
		"volume_extension:volume_actions:upload_public")
	upload("3.1", map[string]any{"image_name": "x", "force": "maybe"}).want(t, http.StatusBadRequest)

	r := upload("3.1", map[string]any{"image_name": "from-volume", "disk_format": "qcow2", "force": false}).want(t, http.StatusAccepted)
	up := r.body["os-volume_upload_image"].(map[string]any)
	imageID, _ := up["image_id"].(string)
	if imageID == "" || up["id"] != src || up["status"] != "uploading" || up["disk_format"] != "qcow2" || up["container_format"] != "bare" ||
		up["image_name"] != "from-volume" || up["visibility"] != "private" || up["protected"] != false || up["size"] != float64(1) ||
		up["display_description"] != "d" || up["updated_at"] == nil {
		t.Fatalf("upload answer %s", r.raw)
	}
	if vt, _ := up["volume_type"].(map[string]any); vt == nil || vt["name"] != "__DEFAULT__" {
		t.Fatalf("upload answer's volume_type %v", up["volume_type"])
	}
	// The volume is busy until its host uploaded it.
	upload("3.1", map[string]any{"image_name": "again"}).fault(t, http.StatusBadRequest, "badRequest",
		"Invalid volume: Volume "+src+" status must be available")
	waitVolumeStatus(t, a, base, demo, src, "available")
	img := gl(t, a, "GET", "/v2/images/"+imageID, demo, nil).want(t, http.StatusOK).body
	if img["status"] != "active" || img["disk_format"] != "qcow2" || img["owner"] != project || img["visibility"] != "private" {
		t.Fatalf("uploaded image %v", img)
	}

	// A volume from the image holds the data.
	copyID := createVolume(t, a, base, demo, map[string]any{"size": 1, "imageRef": imageID})
	if out, ok := qemutest.Try(t, filepath.Join(pool, "volume-"+copyID+".qcow2"), qemutest.Opts{}, "read -P 0xab 0 64k", "read -P 0 64k 64k"); !ok {
		t.Fatalf("the volume made from the uploaded image lost the data: %s", out)
	}
	if left, _ := os.ReadDir(filepath.Join(a.config.DataDir, "storage-upload")); len(left) != 0 {
		t.Fatalf("converted images left behind: %v", left)
	}

	// An in-use volume needs force (Cinder's message); with it, the
	// volume is uploaded and back in-use, its attachment kept.
	volumeCall(t, a, "POST", action, demo, "", map[string]any{"os-reserve": map[string]any{}}).want(t, http.StatusAccepted)
	volumeCall(t, a, "POST", action, demo, "", map[string]any{"os-attach": map[string]any{"host_name": "elsewhere", "mountpoint": "/dev/vdb"}}).
		want(t, http.StatusAccepted)
	waitVolumeStatus(t, a, base, demo, src, "in-use")
	upload("", map[string]any{"image_name": "busy"}).fault(t, http.StatusBadRequest, "badRequest",
		"Invalid volume: Volume "+src+" status must be available")
	r = upload("", map[string]any{"image_name": "attached", "force": "True", "disk_format": "qcow2"}).want(t, http.StatusAccepted)
	if v := waitVolumeStatus(t, a, base, demo, src, "in-use"); len(v["attachments"].([]any)) != 1 {
		t.Fatalf("volume after a forced upload %v", v)
	}
	attached := r.body["os-volume_upload_image"].(map[string]any)["image_id"].(string)
	if img := gl(t, a, "GET", "/v2/images/"+attached, demo, nil).want(t, http.StatusOK).body; img["status"] != "active" || img["visibility"] != "shared" {
		t.Fatalf("image of the in-use volume (3.0: Glance's default visibility) %v", img)
	}
	list := gl(t, a, "GET", "/v2/images", demo, nil).want(t, http.StatusOK)
	if n := strings.Count(string(list.raw), `"name":"from-volume"`); n != 1 || strings.Contains(string(list.raw), `"busy"`) {
		t.Fatalf("images after the refusals: %s", list.raw)
	}
}
