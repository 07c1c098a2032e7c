package agent

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestExtendInUseVolumeThroughTheAPI extends a volume in use (attached
// with Cinder's os-reserve/os-attach, so no guest holds its file) as
// Cinder does: refused below 3.42 with Cinder's message, refused past
// the gigabytes quota with its volume back in-use, accepted at 3.42,
// after which the storage agent grows the file and the volume is in-use
// again with the new size and its attachment; an error status is
// refused at any microversion.
func TestExtendInUseVolumeThroughTheAPI(t *testing.T) {
	t.Parallel()
	a, pool := volumeAgent(t)
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")
	project := projectOf(t, a, demo)
	base := "/volume/v3/" + project

	r := volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{"size": 1}}).want(t, http.StatusAccepted)
	id := r.body["volume"].(map[string]any)["id"].(string)
	waitVolumeStatus(t, a, base, demo, id, "available")
	action := base + "/volumes/" + id + "/action"
	volumeCall(t, a, "POST", action, demo, "", map[string]any{"os-reserve": nil}).want(t, http.StatusAccepted)
	volumeCall(t, a, "POST", action, demo, "", map[string]any{"os-attach": map[string]any{
		"host_name": "bare-metal-1", "mountpoint": "/dev/vdb", "mode": "rw"}}).want(t, http.StatusAccepted)
	waitVolumeStatus(t, a, base, demo, id, "in-use")

	extend := func(version string, size int) volumeResp {
		return volumeCall(t, a, "POST", action, demo, version, map[string]any{"os-extend": map[string]any{"new_size": size}})
	}
	extend("3.41", 2).fault(t, http.StatusBadRequest, "badRequest",
		"Invalid volume: Volume "+id+" status must be '{'status': 'available'}' to extend, currently in-use.")
	extend("", 2).fault(t, http.StatusBadRequest, "badRequest", "status must be '{'status': 'available'}' to extend, currently in-use.")
	extend("3.42", 1).fault(t, http.StatusBadRequest, "badRequest", "New size for extend must be greater than current size. (current: 1, extended: 1).")

	volumeCall(t, a, "PUT", "/volume/v3/os-quota-sets/"+project, admin, "", map[string]any{"quota_set": map[string]any{"gigabytes": 2}}).want(t, http.StatusOK)
	extend("3.42", 3).fault(t, http.StatusRequestEntityTooLarge, "overLimit",
		"Requested volume or snapshot exceeds allowed gigabytes quota. Requested 2G, quota is 2G and 1G has been consumed.")
	if vol := waitVolumeStatus(t, a, base, demo, id, "in-use"); vol["size"] != float64(1) {
		t.Fatalf("volume after a refused extend: %v", vol)
	}

	extend("3.42", 2).want(t, http.StatusAccepted)
	vol := waitVolumeStatus(t, a, base, demo, id, "in-use")
	atts, _ := vol["attachments"].([]any)
	if vol["size"] != float64(2) || len(atts) != 1 {
		t.Fatalf("extended in-use volume: %v", vol)
	}
	if got := virtualSize(t, filepath.Join(pool, "volume-"+id+".qcow2")); got != 2<<30 {
		t.Fatalf("the volume's file is %d bytes, want %d", got, 2<<30)
	}
	r = volumeCall(t, a, "GET", base+"/os-quota-sets/"+project+"?usage=true", demo, "", nil).want(t, http.StatusOK)
	if used := r.body["quota_set"].(map[string]any)["gigabytes"].(map[string]any)["in_use"]; used != float64(2) {
		t.Fatalf("gigabytes in use after the extend: %v", used)
	}

	volumeCall(t, a, "POST", "/volume/v3/volumes/"+id+"/action", admin, "", map[string]any{"os-reset_status": map[string]any{"status": "error"}}).want(t, http.StatusAccepted)
	extend("3.42", 3).fault(t, http.StatusBadRequest, "badRequest",
		"Invalid volume: Volume "+id+" status must be '{'status': 'available'}' to extend, currently error.")
}

// virtualSize is a disk file's size as its guest sees it.
func virtualSize(t *testing.T, path string) int64 {
	t.Helper()
	out, err := exec.Command("qemu-img", "info", "--output=json", "-U", path).Output()
	if err != nil {
		t.Fatalf("qemu-img info %s: %v", path, err)
	}
	var info struct {
		VirtualSize int64 `json:"virtual-size"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	return info.VirtualSize
}
