package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// volumeAgent is a dev agent with ACLs on whose host keeps a 20 GB
// volume pool in a temporary directory; qemu-img must be installed (a
// failure under CI=true).
func volumeAgent(t *testing.T) (*Agent, string) {
	t.Helper()
	if _, err := exec.LookPath("qemu-img"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("qemu-img (qemu-utils) is required under CI=true: %v", err)
		}
		t.Skip("qemu-img (qemu-utils) is not installed")
	}
	pool := t.TempDir()
	on := true
	a := testAgent(t, func(c *Config) {
		c.ACL = &ACLConfig{Enabled: &on}
		c.Client = &ClientConfig{Storage: &StorageConfig{PoolDir: pool, CapacityGB: 20}}
	})
	return a, pool
}

// volumeResp is one Block Storage API answer.
type volumeResp struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// volumeCall sends one Block Storage API request (path under
// /volume/v3/{project}) at a microversion ("" for none).
func volumeCall(t *testing.T, a *Agent, method, path, token, version string, body any) volumeResp {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, a.url(path), rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("OpenStack-API-Version", "volume "+version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := volumeResp{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return out
}

func (r volumeResp) want(t *testing.T, status int) volumeResp {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	return r
}

// fault checks a Cinder fault body: {"<name>": {"message", "code"}}.
func (r volumeResp) fault(t *testing.T, status int, name, msg string) {
	t.Helper()
	r.want(t, status)
	f, _ := r.body[name].(map[string]any)
	if f == nil || f["code"] != float64(status) || !strings.Contains(fmt.Sprint(f["message"]), msg) {
		t.Fatalf("fault %s, want %s with %q", r.raw, name, msg)
	}
}

// projectOf reads a token's project from the identity API.
func projectOf(t *testing.T, a *Agent, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, a.url("/identity/v3/auth/tokens"), nil)
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("X-Subject-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Token struct {
			Project struct{ ID string } `json:"project"`
		} `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Token.Project.ID == "" {
		t.Fatalf("project of a token: %v", err)
	}
	return body.Token.Project.ID
}

// waitVolumeStatus waits for a volume to reach status ("" for gone).
func waitVolumeStatus(t *testing.T, a *Agent, base, token, id, status string) map[string]any {
	t.Helper()
	var vol map[string]any
	waitFor(t, "volume "+id+" "+status, func() error {
		r := volumeCall(t, a, "GET", base+"/volumes/"+id, token, "", nil)
		if status == "" {
			if r.status == http.StatusNotFound {
				return nil
			}
			return fmt.Errorf("status %d: %s", r.status, r.raw)
		}
		vol, _ = r.body["volume"].(map[string]any)
		if vol == nil || vol["status"] != status {
			return fmt.Errorf("volume %s", r.raw)
		}
		return nil
	})
	return vol
}

func waitSnapshotStatus(t *testing.T, a *Agent, base, token, id, status string) {
	t.Helper()
	waitFor(t, "snapshot "+id+" "+status, func() error {
		r := volumeCall(t, a, "GET", base+"/snapshots/"+id, token, "", nil)
		if status == "" && r.status == http.StatusNotFound {
			return nil
		}
		if s, _ := r.body["snapshot"].(map[string]any); s != nil && s["status"] == status {
			return nil
		}
		return fmt.Errorf("snapshot %s", r.raw)
	})
}

func TestVolumeVersionDocuments(t *testing.T) {
	t.Parallel()
	a, _ := volumeAgent(t)
	for path, status := range map[string]int{"/volume/": http.StatusMultipleChoices, "/volume/v3/": http.StatusOK} {
		r := volumeCall(t, a, "GET", path, "", "", nil).want(t, status)
		v := r.body["versions"].([]any)[0].(map[string]any)
		if v["id"] != "v3.0" || v["version"] != "3.70" || v["min_version"] != "3.0" || v["status"] != "CURRENT" {
			t.Fatalf("%s: %s", path, r.raw)
		}
		links := v["links"].([]any)
		if self := links[1].(map[string]any)["href"]; self != a.url("/volume/v3/") {
			t.Fatalf("self link %v", self)
		}
	}
	admin := keystoneToken(t, a, "admin")
	r := volumeCall(t, a, "GET", "/volume/v3/volumes", admin, "3.99", nil)
	r.fault(t, http.StatusNotAcceptable, "computeFault", "Version 3.99 is not supported by the API. Minimum is 3.0 and maximum is 3.70.")
	r = volumeCall(t, a, "GET", "/volume/v3/volumes", admin, "3.64", nil).want(t, http.StatusOK)
	if r.header.Get("OpenStack-API-Version") != "volume 3.64" {
		t.Fatalf("version header %q", r.header.Get("OpenStack-API-Version"))
	}
	volumeCall(t, a, "GET", "/volume/v3/volumes", "", "", nil).fault(t, http.StatusUnauthorized, "unauthorized", "requires authentication")
}

func TestVolumeLifecycleThroughTheAPI(t *testing.T) {
	t.Parallel()
	a, pool := volumeAgent(t)
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")
	base := "/volume/v3/" + projectOf(t, a, demo)

	r := volumeCall(t, a, "POST", base+"/volumes", demo, "3.63", map[string]any{"volume": map[string]any{
		"size": 1, "name": "data", "metadata": map[string]string{"tier": "gold"}}}).want(t, http.StatusAccepted)
	vol := r.body["volume"].(map[string]any)
	id := vol["id"].(string)
	if vol["status"] != "creating" || vol["volume_type"] != "__DEFAULT__" || vol["bootable"] != "false" || vol["volume_type_id"] == nil {
		t.Fatalf("created %s", r.raw)
	}
	vol = waitVolumeStatus(t, a, base, demo, id, "available")
	if vol["availability_zone"] != "nova" || vol["size"] != float64(1) {
		t.Fatalf("available volume %v", vol)
	}
	if _, err := os.Stat(filepath.Join(pool, "volume-"+id+".qcow2")); err != nil {
		t.Fatalf("the pool has no file for the volume: %v", err)
	}

	// Filters: name, status, metadata; the summary list has links.
	r = volumeCall(t, a, "GET", base+"/volumes/detail?metadata=%7B%22tier%22%3A%22gold%22%7D&status=available", demo, "", nil).want(t, http.StatusOK)
	if n := len(r.body["volumes"].([]any)); n != 1 {
		t.Fatalf("metadata filter found %d: %s", n, r.raw)
	}
	r = volumeCall(t, a, "GET", base+"/volumes?name=other", demo, "", nil).want(t, http.StatusOK)
	if n := len(r.body["volumes"].([]any)); n != 0 {
		t.Fatalf("name filter found %d", n)
	}
	checkVolumeScopes(t, a, base, admin, demo)

	// Extend, then snapshot and a volume from the snapshot.
	volumeCall(t, a, "POST", base+"/volumes/"+id+"/action", demo, "", map[string]any{"os-extend": map[string]any{"new_size": 2}}).want(t, http.StatusAccepted)
	vol = waitVolumeStatus(t, a, base, demo, id, "available")
	if vol["size"] != float64(2) {
		t.Fatalf("extended volume %v", vol)
	}
	volumeCall(t, a, "POST", base+"/volumes/"+id+"/action", demo, "", map[string]any{"os-extend": map[string]any{"new_size": 1}}).
		fault(t, http.StatusBadRequest, "badRequest", "New size for extend must be greater than current size. (current: 2, extended: 1).")
	r = volumeCall(t, a, "POST", base+"/snapshots", demo, "", map[string]any{"snapshot": map[string]any{"volume_id": id, "name": "s1"}}).want(t, http.StatusAccepted)
	snapID := r.body["snapshot"].(map[string]any)["id"].(string)
	waitSnapshotStatus(t, a, base, demo, snapID, "available")
	r = volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{"snapshot_id": snapID}}).want(t, http.StatusAccepted)
	clone := r.body["volume"].(map[string]any)
	if clone["size"] != float64(2) || clone["snapshot_id"] != snapID {
		t.Fatalf("volume from a snapshot %v", clone)
	}
	waitVolumeStatus(t, a, base, demo, clone["id"].(string), "available")

	// Deleting a volume with a snapshot, or an in-use one, is refused
	// with Cinder's message; reset_status is admins' only.
	volumeCall(t, a, "DELETE", base+"/volumes/"+id, demo, "", nil).fault(t, http.StatusBadRequest, "badRequest",
		"Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots")
	volumeCall(t, a, "POST", base+"/volumes/"+clone["id"].(string)+"/action", demo, "", map[string]any{"os-reset_status": map[string]any{"status": "in-use"}}).
		fault(t, http.StatusForbidden, "forbidden", "reset_status")
	volumeCall(t, a, "POST", "/volume/v3/volumes/"+clone["id"].(string)+"/action", admin, "", map[string]any{"os-reset_status": map[string]any{"status": "in-use"}}).want(t, http.StatusAccepted)
	volumeCall(t, a, "DELETE", base+"/volumes/"+clone["id"].(string), demo, "", nil).fault(t, http.StatusBadRequest, "badRequest", "Invalid volume: Volume status must be available or error")
	volumeCall(t, a, "POST", "/volume/v3/volumes/"+clone["id"].(string)+"/action", admin, "", map[string]any{"os-force_delete": map[string]any{}}).want(t, http.StatusAccepted)

	// Bad sizes.
	volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{"size": 0}}).fault(t, http.StatusBadRequest, "badRequest", "0 is less than the minimum of 1")
	volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{"size": "big"}}).fault(t, http.StatusBadRequest, "badRequest", "Invalid input for field/attribute size")

	volumeCall(t, a, "DELETE", base+"/snapshots/"+snapID, demo, "", nil).want(t, http.StatusAccepted)
	waitSnapshotStatus(t, a, base, demo, snapID, "")
	volumeCall(t, a, "DELETE", base+"/volumes/"+id, demo, "", nil).want(t, http.StatusAccepted)
	waitVolumeStatus(t, a, base, demo, id, "")
	waitVolumeStatus(t, a, base, demo, clone["id"].(string), "")
	if left, _ := filepath.Glob(filepath.Join(pool, "*.qcow2*")); len(left) != 0 {
		t.Fatalf("files left in the pool: %v", left)
	}
}

func TestVolumeQuotasThroughTheAPI(t *testing.T) {
	t.Parallel()
	a, _ := volumeAgent(t)
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")
	project := projectOf(t, a, demo)
	base := "/volume/v3/" + project

	r := volumeCall(t, a, "GET", base+"/os-quota-sets/"+project+"/defaults", demo, "", nil).want(t, http.StatusOK)
	set := r.body["quota_set"].(map[string]any)
	if set["volumes"] != float64(10) || set["gigabytes"] != float64(1000) || set["snapshots"] != float64(10) || set["volumes___DEFAULT__"] != float64(-1) {
		t.Fatalf("defaults %s", r.raw)
	}
	volumeCall(t, a, "PUT", base+"/os-quota-sets/"+project, demo, "", map[string]any{"quota_set": map[string]any{"volumes": 1}}).want(t, http.StatusForbidden)
	r = volumeCall(t, a, "PUT", "/volume/v3/os-quota-sets/"+project, admin, "", map[string]any{"quota_set": map[string]any{"volumes": 1, "gigabytes": 3}}).want(t, http.StatusOK)
	if s := r.body["quota_set"].(map[string]any); s["volumes"] != float64(1) || s["gigabytes"] != float64(3) {
		t.Fatalf("updated %s", r.raw)
	}
	volumeCall(t, a, "PUT", "/volume/v3/os-quota-sets/"+project, admin, "", map[string]any{"quota_set": map[string]any{"cores": 1}}).
		fault(t, http.StatusBadRequest, "badRequest", "Bad key(s) in quota set: cores")

	volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{"size": 4}}).fault(t, http.StatusRequestEntityTooLarge, "overLimit",
		"Requested volume or snapshot exceeds allowed gigabytes quota. Requested 4G, quota is 3G and 0G has been consumed.")
	r = volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{"size": 1}}).want(t, http.StatusAccepted)
	first := r.body["volume"].(map[string]any)["id"].(string)
	r = volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{"size": 1}})
	r.fault(t, http.StatusRequestEntityTooLarge, "overLimit", "Maximum number of volumes allowed (1) exceeded for quota 'volumes'.")
	if r.header.Get("Retry-After") != "0" {
		t.Fatalf("quota refusal without Retry-After: %v", r.header)
	}
	r = volumeCall(t, a, "GET", base+"/os-quota-sets/"+project+"?usage=true", demo, "", nil).want(t, http.StatusOK)
	if v := r.body["quota_set"].(map[string]any)["volumes"].(map[string]any); v["limit"] != float64(1) || v["in_use"] != float64(1) {
		t.Fatalf("usage %s", r.raw)
	}
	// The default class's limits apply to what a project did not set.
	volumeCall(t, a, "PUT", base+"/os-quota-class-sets/default", demo, "", map[string]any{"quota_class_set": map[string]any{"snapshots": 3}}).want(t, http.StatusForbidden)
	r = volumeCall(t, a, "PUT", "/volume/v3/os-quota-class-sets/default", admin, "", map[string]any{"quota_class_set": map[string]any{"snapshots": 3}}).want(t, http.StatusOK)
	if c := r.body["quota_class_set"].(map[string]any); c["snapshots"] != float64(3) {
		t.Fatalf("quota class update %s", r.raw)
	}
	volumeCall(t, a, "GET", "/volume/v3/os-quota-class-sets/gold", admin, "", nil).want(t, http.StatusNotFound)
	r = volumeCall(t, a, "GET", base+"/os-quota-sets/"+project, demo, "", nil).want(t, http.StatusOK)
	if s := r.body["quota_set"].(map[string]any); s["snapshots"] != float64(3) || s["volumes"] != float64(1) {
		t.Fatalf("demo's limits after the class changed %s", r.raw)
	}
	r = volumeCall(t, a, "GET", base+"/limits", demo, "", nil).want(t, http.StatusOK)
	abs := r.body["limits"].(map[string]any)["absolute"].(map[string]any)
	if abs["maxTotalVolumes"] != float64(1) || abs["totalVolumesUsed"] != float64(1) || abs["totalGigabytesUsed"] != float64(1) {
		t.Fatalf("limits %s", r.raw)
	}
	r = volumeCall(t, a, "GET", base+"/os-availability-zone", demo, "", nil).want(t, http.StatusOK)
	if z := r.body["availabilityZoneInfo"].([]any); len(z) != 1 || z[0].(map[string]any)["zoneName"] != "nova" {
		t.Fatalf("zones %s", r.raw)
	}
	r = volumeCall(t, a, "GET", base+"/types", demo, "", nil).want(t, http.StatusOK)
	if ts := r.body["volume_types"].([]any); len(ts) != 1 || ts[0].(map[string]any)["name"] != "__DEFAULT__" {
		t.Fatalf("types %s", r.raw)
	}
	volumeCall(t, a, "POST", base+"/types", demo, "", map[string]any{"volume_type": map[string]any{"name": "fast"}}).want(t, http.StatusForbidden)
	waitVolumeStatus(t, a, base, demo, first, "available")
	volumeCall(t, a, "DELETE", base+"/volumes/"+first, demo, "", nil).want(t, http.StatusAccepted)
	waitVolumeStatus(t, a, base, demo, first, "")
}

// checkVolumeScopes: another project's volume is not found, another
// project's URL is malformed, and an admin sees every project's volumes
// with all_tenants. demo has one volume.
func checkVolumeScopes(t *testing.T, a *Agent, base, admin, demo string) {
	t.Helper()
	// Another project's volume is not found; another project's URL is
	// malformed; an admin sees every project's with all_tenants.
	r := volumeCall(t, a, "POST", "/volume/v3/volumes", admin, "", map[string]any{"volume": map[string]any{"size": 1}}).want(t, http.StatusAccepted)
	adminVol := r.body["volume"].(map[string]any)["id"].(string)
	volumeCall(t, a, "GET", base+"/volumes/"+adminVol, demo, "", nil).fault(t, http.StatusNotFound, "itemNotFound", "Volume "+adminVol+" could not be found.")
	volumeCall(t, a, "GET", "/volume/v3/"+projectOf(t, a, admin)+"/volumes", demo, "", nil).fault(t, http.StatusBadRequest, "badRequest", "Malformed request url")
	r = volumeCall(t, a, "GET", "/volume/v3/volumes/detail?all_tenants=1", admin, "", nil).want(t, http.StatusOK)
	if n := len(r.body["volumes"].([]any)); n != 2 {
		t.Fatalf("admin's all_tenants list has %d volumes", n)
	}
	r = volumeCall(t, a, "GET", "/volume/v3/volumes/detail", admin, "", nil).want(t, http.StatusOK)
	if n := len(r.body["volumes"].([]any)); n != 1 {
		t.Fatalf("admin's own list has %d volumes", n)
	}
	waitVolumeStatus(t, a, "/volume/v3", admin, adminVol, "available")
	volumeCall(t, a, "DELETE", "/volume/v3/volumes/"+adminVol, admin, "", nil).want(t, http.StatusAccepted)

}

func TestVolumeFromImage(t *testing.T) {
	t.Parallel()
	a, pool := volumeAgent(t)
	waitDevImages(t, a)
	demo := keystoneToken(t, a, "demo")
	base := "/volume/v3/" + projectOf(t, a, demo)
	r := volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{
		"size": 1, "name": "boot", "imageRef": devImageID}}).want(t, http.StatusAccepted)
	id := r.body["volume"].(map[string]any)["id"].(string)
	vol := waitVolumeStatus(t, a, base, demo, id, "available")
	meta, _ := vol["volume_image_metadata"].(map[string]any)
	if vol["bootable"] != "true" || meta["image_id"] != devImageID {
		t.Fatalf("volume from the dev image %v", vol)
	}
	out, err := exec.Command("qemu-img", "info", "--output=json", "-U", filepath.Join(pool, "volume-"+id+".qcow2")).Output()
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		VirtualSize int64 `json:"virtual-size"`
		ActualSize  int64 `json:"actual-size"`
	}
	if err := json.Unmarshal(out, &info); err != nil || info.VirtualSize != 1<<30 || info.ActualSize == 0 {
		t.Fatalf("volume file %s: %v", out, err)
	}
	volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{"size": 1, "imageRef": "00000000-0000-0000-0000-000000000000"}}).
		fault(t, http.StatusNotFound, "itemNotFound", "Image 00000000-0000-0000-0000-000000000000 could not be found.")
	volumeCall(t, a, "DELETE", base+"/volumes/"+id, demo, "", nil).want(t, http.StatusAccepted)
	waitVolumeStatus(t, a, base, demo, id, "")
}

func TestVolumeMetadataUpdateBootableAndTypes(t *testing.T) {
	t.Parallel()
	a, _ := volumeAgent(t)
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")
	base := "/volume/v3/" + projectOf(t, a, demo)
	r := volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{"size": 1, "name": "m"}}).want(t, http.StatusAccepted)
	id := r.body["volume"].(map[string]any)["id"].(string)
	vpath := base + "/volumes/" + id

	r = volumeCall(t, a, "POST", vpath+"/metadata", demo, "", map[string]any{"metadata": map[string]string{"a": "1", "b": "2"}}).want(t, http.StatusOK)
	if m := r.body["metadata"].(map[string]any); len(m) != 2 {
		t.Fatalf("merged metadata %s", r.raw)
	}
	r = volumeCall(t, a, "PUT", vpath+"/metadata/a", demo, "", map[string]any{"meta": map[string]string{"a": "9"}}).want(t, http.StatusOK)
	volumeCall(t, a, "PUT", vpath+"/metadata/a", demo, "", map[string]any{"meta": map[string]string{"z": "9"}}).fault(t, http.StatusBadRequest, "badRequest", "Request body and URI mismatch")
	volumeCall(t, a, "DELETE", vpath+"/metadata/b", demo, "", nil).want(t, http.StatusOK)
	r = volumeCall(t, a, "GET", vpath+"/metadata/a", demo, "", nil).want(t, http.StatusOK)
	if r.body["meta"].(map[string]any)["a"] != "9" {
		t.Fatalf("metadata item %s", r.raw)
	}
	volumeCall(t, a, "GET", vpath+"/metadata/b", demo, "", nil).want(t, http.StatusNotFound)
	r = volumeCall(t, a, "PUT", vpath+"/metadata", demo, "", map[string]any{"metadata": map[string]string{"c": "3"}}).want(t, http.StatusOK)
	if m := r.body["metadata"].(map[string]any); len(m) != 1 || m["c"] != "3" {
		t.Fatalf("replaced metadata %s", r.raw)
	}

	r = volumeCall(t, a, "PUT", vpath, demo, "", map[string]any{"volume": map[string]any{"name": "renamed", "description": "d"}}).want(t, http.StatusOK)
	if v := r.body["volume"].(map[string]any); v["name"] != "renamed" || v["description"] != "d" {
		t.Fatalf("updated %s", r.raw)
	}
	volumeCall(t, a, "POST", vpath+"/action", demo, "", map[string]any{"os-set_bootable": map[string]any{"bootable": true}}).want(t, http.StatusOK)
	if v := volumeCall(t, a, "GET", vpath, demo, "", nil).body["volume"].(map[string]any); v["bootable"] != "true" {
		t.Fatalf("bootable %v", v["bootable"])
	}
	volumeCall(t, a, "POST", vpath+"/action", demo, "", map[string]any{"os-frobnicate": map[string]any{}}).fault(t, http.StatusBadRequest, "badRequest", "There is no such action: os-frobnicate")

	// Types: admins create and delete; a volume of the type keeps it.
	r = volumeCall(t, a, "POST", "/volume/v3/types", admin, "", map[string]any{"volume_type": map[string]any{"name": "fast",
		"extra_specs": map[string]string{"volume_backend_name": "file"}}}).want(t, http.StatusOK)
	typeID := r.body["volume_type"].(map[string]any)["id"].(string)
	volumeCall(t, a, "POST", "/volume/v3/types", admin, "", map[string]any{"volume_type": map[string]any{"name": "fast"}}).want(t, http.StatusConflict)
	r = volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{"size": 1, "volume_type": "fast"}}).want(t, http.StatusAccepted)
	typed := r.body["volume"].(map[string]any)
	if typed["volume_type"] != "fast" {
		t.Fatalf("typed volume %v", typed)
	}
	volumeCall(t, a, "DELETE", "/volume/v3/types/"+typeID, admin, "", nil).want(t, http.StatusBadRequest)
	volumeCall(t, a, "GET", "/volume/v3/types/default", demo, "", nil).want(t, http.StatusOK)
	volumeCall(t, a, "POST", base+"/volumes", demo, "", map[string]any{"volume": map[string]any{"size": 1, "volume_type": "slow"}}).
		fault(t, http.StatusNotFound, "itemNotFound", "Volume type slow could not be found.")

	// Snapshot update and list by volume.
	waitVolumeStatus(t, a, base, demo, id, "available")
	r = volumeCall(t, a, "POST", base+"/snapshots", demo, "3.41", map[string]any{"snapshot": map[string]any{"volume_id": id}}).want(t, http.StatusAccepted)
	snap := r.body["snapshot"].(map[string]any)
	if snap["user_id"] == nil || snap["size"] != float64(1) {
		t.Fatalf("snapshot at 3.41 %v", snap)
	}
	r = volumeCall(t, a, "PUT", base+"/snapshots/"+snap["id"].(string), demo, "", map[string]any{"snapshot": map[string]any{"name": "nightly"}}).want(t, http.StatusOK)
	r = volumeCall(t, a, "GET", base+"/snapshots/detail?volume_id="+id, demo, "", nil).want(t, http.StatusOK)
	if s := r.body["snapshots"].([]any); len(s) != 1 || s[0].(map[string]any)["name"] != "nightly" {
		t.Fatalf("snapshots %s", r.raw)
	}
}
