package agent

import (
	"bytes"
	"crypto/md5"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// keystoneToken issues a project-scoped token for a dev user (whose
// password is its name) through the agent's identity API.
func keystoneToken(t *testing.T, a *Agent, user string) string {
	t.Helper()
	body := fmt.Sprintf(`{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":%q,"domain":{"id":"default"},"password":%q}}},
		"scope":{"project":{"name":%q,"domain":{"id":"default"}}}}}`, user, user, user)
	// Seeding hashes passwords with bcrypt, slow under the race
	// detector beside other tests: wait longer than waitFor does.
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Post(a.url("/identity/v3/auth/tokens"), "application/json", strings.NewReader(body))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusCreated {
				return resp.Header.Get("X-Subject-Token")
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for a token for %s: %v", user, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// glanceResp is one Image API answer.
type glanceResp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r *glanceResp) want(t *testing.T, status int) *glanceResp {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	return r
}

// wantError asserts Glance's JSON error body with a message containing
// msg.
func (r *glanceResp) wantError(t *testing.T, status int, msg string) {
	t.Helper()
	r.want(t, status)
	m, _ := r.body["message"].(string)
	if r.body["code"] != fmt.Sprintf("%d %s", status, http.StatusText(status)) || r.body["title"] != http.StatusText(status) ||
		!strings.Contains(m, msg) {
		t.Fatalf("error body %s, want a message containing %q", r.raw, msg)
	}
}

// gl sends a request to the agent's Image API. body is JSON-encoded
// unless it is a string or an io.Reader; headers are "Name: value".
func gl(t *testing.T, a *Agent, method, path, token string, body any, headers ...string) *glanceResp {
	t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case string:
		rd, ct = strings.NewReader(b), "application/json"
	case io.Reader:
		rd, ct = b, "application/octet-stream"
	default:
		data, _ := json.Marshal(b)
		rd, ct = bytes.NewReader(data), "application/json"
	}
	req, err := http.NewRequest(method, a.url("/image"+path), rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	req.Header.Set("Accept", "application/json")
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := &glanceResp{status: resp.StatusCode, header: resp.Header, raw: raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return out
}

func hexMD5(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

func hexSHA512(b []byte) string {
	s := sha512.Sum512(b)
	return hex.EncodeToString(s[:])
}

func patchOps(ops ...string) string { return "[" + strings.Join(ops, ",") + "]" }

const patchType = "Content-Type: application/openstack-images-v2.1-json-patch"

func TestGlanceRoundTripAndAPI(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")

	// Version discovery without a token; the dev image is listed.
	gl(t, a, "GET", "", "", nil).want(t, http.StatusMultipleChoices)
	if r := gl(t, a, "GET", "/versions", "", nil).want(t, http.StatusOK); !strings.Contains(string(r.raw), `"v2.7"`) {
		t.Fatalf("versions %s", r.raw)
	}
	waitFor(t, "the dev image", func() error {
		r := gl(t, a, "GET", "/v2/images?name=cirros", demo, nil)
		if imgs, _ := r.body["images"].([]any); len(imgs) != 1 {
			return fmt.Errorf("%s", r.raw)
		}
		return nil
	})

	// Create, upload, download.
	r := gl(t, a, "POST", "/v2/images", demo, map[string]any{"name": "disk", "disk_format": "raw", "container_format": "bare",
		"visibility": "private", "tags": []string{"a"}, "hw_architecture": "x86_64", "min_ram": 64}).want(t, http.StatusCreated)
	id := r.body["id"].(string)
	if r.body["status"] != "queued" || r.body["size"] != nil || r.body["checksum"] != nil || r.body["hw_architecture"] != "x86_64" ||
		r.body["self"] != "/v2/images/"+id || r.body["file"] != "/v2/images/"+id+"/file" || r.body["owner"] == nil ||
		!strings.HasSuffix(r.header.Get("Location"), "/image/v2/images/"+id) {
		t.Fatalf("created %s", r.raw)
	}
	gl(t, a, "GET", "/v2/images/"+id+"/file", demo, nil).want(t, http.StatusNoContent)
	data := bytes.Repeat([]byte("0123456789abcdef"), 200_000) // 3.2 MB
	data = append(data, 0, 1, 2)
	gl(t, a, "PUT", "/v2/images/"+id+"/file", demo, bytes.NewReader(data)).want(t, http.StatusNoContent)
	r = gl(t, a, "GET", "/v2/images/"+id, demo, nil).want(t, http.StatusOK)
	if r.body["status"] != "active" || r.body["size"] != float64(len(data)) || r.body["virtual_size"] != float64(len(data)) ||
		r.body["checksum"] != hexMD5(data) || r.body["os_hash_algo"] != "sha512" || r.body["os_hash_value"] != hexSHA512(data) {
		t.Fatalf("after upload %s", r.raw)
	}
	r = gl(t, a, "GET", "/v2/images/"+id+"/file", demo, nil).want(t, http.StatusOK)
	if !bytes.Equal(r.raw, data) || r.header.Get("Content-MD5") != hexMD5(data) || r.header.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("download: %d bytes, headers %v", len(r.raw), r.header)
	}
	r = gl(t, a, "GET", "/v2/images/"+id+"/file", demo, nil, "Range: bytes=10-19").want(t, http.StatusPartialContent)
	if !bytes.Equal(r.raw, data[10:20]) || r.header.Get("Content-Range") != fmt.Sprintf("bytes 10-19/%d", len(data)) {
		t.Fatalf("range: %q %v", r.raw, r.header)
	}
	r = gl(t, a, "GET", "/v2/images/"+id+"/file", demo, nil, "Range: bytes=-3").want(t, http.StatusPartialContent)
	if !bytes.Equal(r.raw, []byte{0, 1, 2}) {
		t.Fatalf("suffix range: %v", r.raw)
	}
	gl(t, a, "GET", "/v2/images/"+id+"/file", demo, nil, fmt.Sprintf("Range: bytes=%d-", len(data))).want(t, http.StatusRequestedRangeNotSatisfiable)
	gl(t, a, "PUT", "/v2/images/"+id+"/file", demo, bytes.NewReader(data)).
		wantError(t, http.StatusConflict, "Image status transition from active to saving is not allowed")

	// PATCH: replace an attribute, add and remove properties, tags.
	r = gl(t, a, "PATCH", "/v2/images/"+id, demo, patchOps(
		`{"op":"replace","path":"/name","value":"disk-2"}`,
		`{"op":"add","path":"/os_distro","value":"debian"}`,
		`{"op":"remove","path":"/hw_architecture"}`,
		`{"op":"replace","path":"/tags","value":["b","c"]}`,
		`{"op":"add","path":"/min_disk","value":1}`), patchType).want(t, http.StatusOK)
	if r.body["name"] != "disk-2" || r.body["os_distro"] != "debian" || r.body["hw_architecture"] != nil || r.body["min_disk"] != float64(1) ||
		fmt.Sprint(r.body["tags"]) != "[b c]" {
		t.Fatalf("patched %s", r.raw)
	}
	r = gl(t, a, "PATCH", "/v2/images/"+id, demo, `[{"replace":"/name","value":"disk-3"}]`,
		"Content-Type: application/openstack-images-v2.0-json-patch").want(t, http.StatusOK)
	if r.body["name"] != "disk-3" {
		t.Fatalf("draft 4 patch %s", r.raw)
	}
	gl(t, a, "PUT", "/v2/images/"+id+"/tags/d", demo, nil).want(t, http.StatusNoContent)
	gl(t, a, "DELETE", "/v2/images/"+id+"/tags/b", demo, nil).want(t, http.StatusNoContent)
	gl(t, a, "DELETE", "/v2/images/"+id+"/tags/b", demo, nil).wantError(t, http.StatusNotFound, "Tag b not found.")
	if r = gl(t, a, "GET", "/v2/images/"+id, demo, nil); fmt.Sprint(r.body["tags"]) != "[c d]" {
		t.Fatalf("tags %s", r.raw)
	}

	// List: filters, sort and pages with a next link.
	for i := 0; i < 3; i++ {
		gl(t, a, "POST", "/v2/images", demo, map[string]any{"name": fmt.Sprintf("page-%d", i), "tags": []string{"paged"}}).want(t, http.StatusCreated)
	}
	r = gl(t, a, "GET", "/v2/images?tag=paged&sort=name:asc&limit=2", demo, nil).want(t, http.StatusOK)
	imgs := r.body["images"].([]any)
	next, _ := r.body["next"].(string)
	if len(imgs) != 2 || imgs[0].(map[string]any)["name"] != "page-0" || next == "" || r.body["schema"] != "/v2/schemas/images" {
		t.Fatalf("first page %s", r.raw)
	}
	r = gl(t, a, "GET", strings.TrimPrefix(next, ""), demo, nil).want(t, http.StatusOK)
	if imgs = r.body["images"].([]any); len(imgs) != 1 || imgs[0].(map[string]any)["name"] != "page-2" || r.body["next"] != nil {
		t.Fatalf("second page %s", r.raw)
	}
	r = gl(t, a, "GET", "/v2/images?status=queued&sort_key=name&sort_dir=desc", demo, nil).want(t, http.StatusOK)
	if imgs = r.body["images"].([]any); len(imgs) != 3 || imgs[0].(map[string]any)["name"] != "page-2" {
		t.Fatalf("status filter %s", r.raw)
	}
	for _, q := range []string{"size_min=1000000", "disk_format=raw", "visibility=private", "os_distro=debian", "name=in:disk-3,nope"} {
		r = gl(t, a, "GET", "/v2/images?"+q, demo, nil).want(t, http.StatusOK)
		if imgs = r.body["images"].([]any); len(imgs) != 1 || imgs[0].(map[string]any)["id"] != id {
			t.Fatalf("filter %s: %s", q, r.raw)
		}
	}

	// Deactivation is for admins; a member cannot read its data then.
	gl(t, a, "POST", "/v2/images/"+id+"/actions/deactivate", demo, nil).wantError(t, http.StatusForbidden, "deactivate")
	gl(t, a, "POST", "/v2/images/"+id+"/actions/deactivate", admin, nil).want(t, http.StatusNoContent)
	gl(t, a, "GET", "/v2/images/"+id+"/file", demo, nil).wantError(t, http.StatusForbidden, "Image data download is forbidden.")
	gl(t, a, "GET", "/v2/images/"+id+"/file", admin, nil).want(t, http.StatusOK)
	gl(t, a, "POST", "/v2/images/"+id+"/actions/reactivate", admin, nil).want(t, http.StatusNoContent)

	// Sharing: the admin project shares an image with demo.
	demoProject := a.identityProject(t, demo)
	r = gl(t, a, "POST", "/v2/images", admin, map[string]any{"name": "gift", "visibility": "shared"}).want(t, http.StatusCreated)
	gift := r.body["id"].(string)
	gl(t, a, "GET", "/v2/images/"+gift, demo, nil).wantError(t, http.StatusNotFound, "No image found with ID "+gift)
	r = gl(t, a, "POST", "/v2/images/"+gift+"/members", admin, map[string]any{"member": demoProject}).want(t, http.StatusOK)
	if r.body["status"] != "pending" || r.body["schema"] != "/v2/schemas/member" {
		t.Fatalf("member %s", r.raw)
	}
	gl(t, a, "POST", "/v2/images/"+gift+"/members", admin, map[string]any{"member": demoProject}).want(t, http.StatusConflict)
	gl(t, a, "GET", "/v2/images/"+gift, demo, nil).want(t, http.StatusOK)
	if r = gl(t, a, "GET", "/v2/images?name=gift", demo, nil); len(r.body["images"].([]any)) != 0 {
		t.Fatalf("pending share listed %s", r.raw)
	}
	if r = gl(t, a, "GET", "/v2/images?name=gift&member_status=pending", demo, nil); len(r.body["images"].([]any)) != 1 {
		t.Fatalf("pending share with member_status %s", r.raw)
	}
	gl(t, a, "PUT", "/v2/images/"+gift+"/members/"+demoProject, admin, map[string]any{"status": "accepted"}).want(t, http.StatusOK)
	gl(t, a, "PUT", "/v2/images/"+gift+"/members/"+demoProject, demo, map[string]any{"status": "maybe"}).wantError(t, http.StatusBadRequest, "Invalid status")
	gl(t, a, "PUT", "/v2/images/"+gift+"/members/"+demoProject, demo, map[string]any{"status": "accepted"}).want(t, http.StatusOK)
	if r = gl(t, a, "GET", "/v2/images?name=gift", demo, nil); len(r.body["images"].([]any)) != 1 {
		t.Fatalf("accepted share not listed %s", r.raw)
	}
	if r = gl(t, a, "GET", "/v2/images/"+gift+"/members", demo, nil).want(t, http.StatusOK); len(r.body["members"].([]any)) != 1 {
		t.Fatalf("members %s", r.raw)
	}
	gl(t, a, "PATCH", "/v2/images/"+gift, demo, patchOps(`{"op":"replace","path":"/name","value":"mine"}`), patchType).
		wantError(t, http.StatusForbidden, "modify_image")
	gl(t, a, "DELETE", "/v2/images/"+gift+"/members/"+demoProject, admin, nil).want(t, http.StatusNoContent)
	gl(t, a, "GET", "/v2/images/"+gift, demo, nil).want(t, http.StatusNotFound)
	gl(t, a, "POST", "/v2/images/"+id+"/members", demo, map[string]any{"member": "x"}).wantError(t, http.StatusForbidden, "Only shared images have members.")

	// Schemas, enough for glanceclient.
	r = gl(t, a, "GET", "/v2/schemas/image", demo, nil).want(t, http.StatusOK)
	if r.body["name"] != "image" || r.body["additionalProperties"] == nil || r.body["properties"].(map[string]any)["os_hash_value"] == nil {
		t.Fatalf("schema %s", r.raw)
	}
	for _, s := range []string{"images", "member", "members"} {
		if r = gl(t, a, "GET", "/v2/schemas/"+s, demo, nil).want(t, http.StatusOK); r.body["name"] != s {
			t.Fatalf("schema %s: %s", s, r.raw)
		}
	}

	// Delete; the data goes with the image (after the sweep's grace).
	gl(t, a, "DELETE", "/v2/images/"+id, demo, nil).want(t, http.StatusNoContent)
	gl(t, a, "GET", "/v2/images/"+id, demo, nil).want(t, http.StatusNotFound)
}

// identityProject is the project id of a token.
func (a *Agent) identityProject(t *testing.T, token string) string {
	t.Helper()
	tok, err := a.Identity().Verify(token)
	if err != nil {
		t.Fatal(err)
	}
	return tok.ProjectID
}

func TestGlanceRefusals(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")
	gl(t, a, "GET", "/v2/images", "", nil).wantError(t, http.StatusUnauthorized, "could not verify that you are authorized")
	gl(t, a, "GET", "/v2/images", "v1.bogus.token", nil).want(t, http.StatusUnauthorized)
	gl(t, a, "GET", "/v2/nothing", demo, nil).want(t, http.StatusNotFound)
	r := gl(t, a, "PUT", "/v2/images", demo, "{}")
	r.want(t, http.StatusMethodNotAllowed)
	if allow := r.header.Get("Allow"); allow != "GET, POST" {
		t.Fatalf("Allow %q", allow)
	}

	// Another project's private image is a 404, whatever the call.
	r = gl(t, a, "POST", "/v2/images", admin, map[string]any{"name": "secret", "visibility": "private"}).want(t, http.StatusCreated)
	secret := r.body["id"].(string)
	for _, call := range []struct{ method, path string }{
		{"GET", "/v2/images/" + secret}, {"GET", "/v2/images/" + secret + "/file"}, {"DELETE", "/v2/images/" + secret},
		{"PUT", "/v2/images/" + secret + "/tags/x"}, {"GET", "/v2/images/" + secret + "/members"},
	} {
		gl(t, a, call.method, call.path, demo, nil).wantError(t, http.StatusNotFound, "No image found with ID "+secret)
	}
	if r = gl(t, a, "GET", "/v2/images?name=secret", demo, nil); len(r.body["images"].([]any)) != 0 {
		t.Fatalf("listed another project's private image: %s", r.raw)
	}
	gl(t, a, "GET", "/v2/images/not-a-uuid", demo, nil).want(t, http.StatusNotFound)

	// Creation refusals.
	for _, tc := range []struct {
		body   any
		status int
		msg    string
	}{
		{map[string]any{"visibility": "public"}, http.StatusForbidden, "publicize_image"},
		{map[string]any{"owner": "someone-else"}, http.StatusForbidden, "You are not permitted to create images owned by 'someone-else'."},
		{map[string]any{"status": "active"}, http.StatusForbidden, "Attribute 'status' is read-only."},
		{map[string]any{"deleted": "x"}, http.StatusForbidden, "Attribute 'deleted' is reserved."},
		{map[string]any{"os_glance_x": "x"}, http.StatusForbidden, "Attribute 'os_glance_x' is reserved."},
		{map[string]any{"disk_format": "floppy"}, http.StatusBadRequest, "'floppy' is not one of"},
		{map[string]any{"min_ram": "lots"}, http.StatusBadRequest, "is not of type 'integer'"},
		{map[string]any{"min_ram": -1}, http.StatusBadRequest, "Cannot be a negative value."},
		{map[string]any{"custom": 42}, http.StatusBadRequest, "42 is not of type 'string'"},
		{map[string]any{"id": "nope"}, http.StatusBadRequest, "does not match"},
		{"{", http.StatusBadRequest, "Malformed JSON"},
		{"", http.StatusBadRequest, "Body expected in request."},
	} {
		gl(t, a, "POST", "/v2/images", demo, tc.body).wantError(t, tc.status, tc.msg)
	}
	gl(t, a, "POST", "/v2/images", demo, "{}", "Content-Type: text/plain").want(t, http.StatusUnsupportedMediaType)
	r = gl(t, a, "POST", "/v2/images", demo, map[string]any{"name": "mine"}).want(t, http.StatusCreated)
	mine := r.body["id"].(string)

	// Bad patches.
	for _, tc := range []struct {
		body   string
		status int
		msg    string
	}{
		{`{"op":"add"}`, http.StatusBadRequest, "Request body must be a JSON array of operation objects."},
		{`["x"]`, http.StatusBadRequest, "Operations must be JSON objects."},
		{`[{"op":"move","path":"/name","value":"x"}]`, http.StatusBadRequest, "Invalid operation: `move`."},
		{`[{"path":"/name","value":"x"}]`, http.StatusBadRequest, "Unable to find `op` in JSON Schema change."},
		{`[{"op":"add","path":"name","value":"x"}]`, http.StatusBadRequest, "does not start with"},
		{`[{"op":"add","path":"/a/b","value":"x"}]`, http.StatusBadRequest, "Invalid JSON pointer for this resource: '/a/b'"},
		{`[{"op":"add","path":"/name"}]`, http.StatusBadRequest, `Operation "add" requires a member named "value".`},
		{`[{"op":"replace","path":"/size","value":1}]`, http.StatusForbidden, "Attribute 'size' is read-only."},
		{`[{"op":"add","path":"/deleted","value":"x"}]`, http.StatusForbidden, "Attribute 'deleted' is reserved."},
		{`[{"op":"remove","path":"/name"}]`, http.StatusForbidden, "Property name may not be removed."},
		{`[{"op":"remove","path":"/nothing"}]`, http.StatusConflict, "Property nothing does not exist."},
		{`[{"op":"replace","path":"/nothing","value":"x"}]`, http.StatusConflict, "Property nothing does not exist."},
		{`[{"op":"replace","path":"/visibility","value":"public"}]`, http.StatusForbidden, "publicize_image"},
		{`[{"op":"replace","path":"/owner","value":"x"}]`, http.StatusForbidden, "Owner can't be updated by non admin."},
		{`[{"op":"replace","path":"/protected","value":"yes"}]`, http.StatusBadRequest, "is not of type 'boolean'"},
		{`[{"op":"add","path":"/locations/-","value":{}}]`, http.StatusForbidden, "locations are invisible"},
	} {
		gl(t, a, "PATCH", "/v2/images/"+mine, demo, tc.body, patchType).wantError(t, tc.status, tc.msg)
	}
	r = gl(t, a, "PATCH", "/v2/images/"+mine, demo, `[]`, "Content-Type: application/json")
	r.wantError(t, http.StatusUnsupportedMediaType, "is not supported")
	if !strings.Contains(r.header.Get("Accept-Patch"), "application/openstack-images-v2.1-json-patch") {
		t.Fatalf("Accept-Patch %q", r.header.Get("Accept-Patch"))
	}

	// Wrong upload content type; data for another project's image.
	gl(t, a, "PUT", "/v2/images/"+mine+"/file", demo, "data").wantError(t, http.StatusUnsupportedMediaType, "not supported")
	r = gl(t, a, "POST", "/v2/images", admin, map[string]any{"name": "adm", "visibility": "community"}).want(t, http.StatusCreated)
	community := r.body["id"].(string)
	gl(t, a, "PUT", "/v2/images/"+community+"/file", demo, strings.NewReader("x")).wantError(t, http.StatusForbidden, "upload_image")
	gl(t, a, "DELETE", "/v2/images/"+community, demo, nil).wantError(t, http.StatusForbidden, "delete_image")

	// Protected images are not deleted.
	gl(t, a, "PATCH", "/v2/images/"+mine, demo, patchOps(`{"op":"replace","path":"/protected","value":true}`), patchType).want(t, http.StatusOK)
	gl(t, a, "DELETE", "/v2/images/"+mine, demo, nil).wantError(t, http.StatusForbidden, "Image "+mine+" is protected and cannot be deleted.")
	gl(t, a, "PATCH", "/v2/images/"+mine, demo, patchOps(`{"op":"replace","path":"/protected","value":false}`), patchType).want(t, http.StatusOK)
	gl(t, a, "DELETE", "/v2/images/"+mine, demo, nil).want(t, http.StatusNoContent)

	// Bad list parameters.
	for q, msg := range map[string]string{
		"limit=x": "limit param must be an integer", "sort_key=color": "Invalid sort key: color.",
		"sort_dir=up": "Invalid sort direction: up", "visibility=everyone": "Invalid visibility value: everyone",
		"member_status=maybe": "Invalid status: maybe", "marker=" + community: "could not be found",
		"sort=name&sort_key=id": "Old and new sorting syntax cannot be combined", "os_hidden=maybe": "Invalid value 'maybe' for 'os_hidden' filter.",
	} {
		gl(t, a, "GET", "/v2/images?"+q, demo, nil).wantError(t, http.StatusBadRequest, msg)
	}
	// Errors answer HTML or plain text to clients that ask for them.
	req, _ := http.NewRequest("GET", a.url("/image/v2/images/"+secret), nil)
	req.Header.Set("X-Auth-Token", demo)
	req.Header.Set("Accept", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.HasPrefix(string(b), "404 Not Found\n\nNo image found with ID") {
		t.Fatalf("plain error %d %q", resp.StatusCode, b)
	}
}

// zeros is a reader of n zero bytes that holds none of them.
type zeros struct{ left int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.left == 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), z.left))
	clear(p[:n])
	z.left -= int64(n)
	return n, nil
}

// heapWatch samples the heap until stopped and reports the largest
// HeapInuse seen.
func heapWatch() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

// The MD5 and SHA-512 of 3 GiB of zeros.
const (
	zeros3GiBMD5    = "c698c87fb53058d493492b61f4c74189"
	zeros3GiBSHA512 = "bf554a61551d250585ecfe6c82b14a3e26594311f27d433280768d9d4bcd8daddbd180a661100b1dd2437d996696ee333308c19b8a519bbacc49e97b5f101648"
)

// TestGlanceStreamsAMultiGigabyteImage uploads 3 GiB of zeros made by a
// reader (not a file) and downloads it again: every hop streams, so the
// heap stays far below the image's size, and the zeros stay holes on
// disk.
func TestGlanceStreamsAMultiGigabyteImage(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 6 GiB through the agent")
	}
	a := testAgent(t, nil)
	demo := keystoneToken(t, a, "demo")
	r := gl(t, a, "POST", "/v2/images", demo, map[string]any{"name": "big", "disk_format": "raw", "container_format": "bare"}).
		want(t, http.StatusCreated)
	id := r.body["id"].(string)
	const size = 3 << 30
	const bound = 256 << 20

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := heapWatch()
	req, _ := http.NewRequest("PUT", a.url("/image/v2/images/"+id+"/file"), &zeros{left: size})
	req.ContentLength = size
	req.Header.Set("X-Auth-Token", demo)
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	peak := stop()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("upload: %d %s", resp.StatusCode, b)
	}
	grew := int64(peak) - int64(before.HeapInuse)
	t.Logf("upload: the heap grew by at most %d MiB", grew>>20)
	if grew > bound {
		t.Fatalf("the heap grew by %d MiB during a 3 GiB upload", grew>>20)
	}
	r = gl(t, a, "GET", "/v2/images/"+id, demo, nil).want(t, http.StatusOK)
	if r.body["status"] != "active" || r.body["size"] != float64(size) || r.body["checksum"] != zeros3GiBMD5 || r.body["os_hash_value"] != zeros3GiBSHA512 {
		t.Fatalf("uploaded %s", r.raw)
	}
	// Stored sparse.
	if st, err := statBlob(a, zeros3GiBSHA512); err != nil || st > 64<<20 {
		t.Fatalf("blob uses %d bytes on disk (%v)", st, err)
	}

	runtime.GC()
	runtime.ReadMemStats(&before)
	stop = heapWatch()
	req, _ = http.NewRequest("GET", a.url("/image/v2/images/"+id+"/file"), nil)
	req.Header.Set("X-Auth-Token", demo)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	h := sha512.New()
	n, err := io.CopyBuffer(h, resp.Body, make([]byte, 1<<20))
	resp.Body.Close()
	peak = stop()
	if err != nil || n != size || hex.EncodeToString(h.Sum(nil)) != zeros3GiBSHA512 || resp.Header.Get("Content-MD5") != zeros3GiBMD5 {
		t.Fatalf("download: %d bytes, %v", n, err)
	}
	grew = int64(peak) - int64(before.HeapInuse)
	t.Logf("download: the heap grew by at most %d MiB", grew>>20)
	if grew > bound {
		t.Fatalf("the heap grew by %d MiB during a 3 GiB download", grew>>20)
	}
}

// TestImageSurvivesLosingTheServerThatReceivedIt: three server agents;
// an image uploaded through one of them is copied to a second, so after
// the first stops, the others still serve it through the Image API.
func TestImageSurvivesLosingTheServerThatReceivedIt(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a three-server cluster")
	}
	agents := serverAgents(t, 3)
	first := agents[0]
	var seeded structs.GenericResponse
	waitFor(t, "identity seeded", func() error {
		return first.self.RPC("Identity.SeedDev", &structs.IdentitySeedRequest{}, &seeded)
	})
	admin := keystoneToken(t, first, "admin")
	// A young cluster under load may still change leaders: a write that
	// lost its leader answers 503, and is tried again.
	var id string
	waitFor(t, "the image created", func() error {
		r := gl(t, first, "POST", "/v2/images", admin, map[string]any{"name": "survivor", "disk_format": "raw",
			"container_format": "bare", "visibility": "public"})
		if r.status != http.StatusCreated {
			return fmt.Errorf("%d %s", r.status, r.raw)
		}
		id = r.body["id"].(string)
		return nil
	})
	data := bytes.Repeat([]byte("stratus images survive "), 100_000)
	waitFor(t, "the data uploaded", func() error {
		if r := gl(t, first, "PUT", "/v2/images/"+id+"/file", admin, bytes.NewReader(data)); r.status != http.StatusNoContent {
			return fmt.Errorf("%d %s", r.status, r.raw)
		}
		return nil
	})
	hash := hexSHA512(data)
	if !first.Server().ImageStore().Has(hash) {
		t.Fatal("the receiving server does not hold the data")
	}
	waitFor(t, "a second copy", func() error {
		n := 0
		for _, a := range agents {
			if a.Server().ImageStore().Has(hash) {
				n++
			}
		}
		if n < 2 {
			return fmt.Errorf("%d copies", n)
		}
		return nil
	})
	_ = first.Shutdown()
	for _, a := range agents[1:] {
		var got *glanceResp
		waitFor(t, "a download after the loss", func() error {
			got = gl(t, a, "GET", "/v2/images/"+id+"/file", admin, nil)
			if got.status != http.StatusOK {
				return fmt.Errorf("%d %s", got.status, got.raw)
			}
			return nil
		})
		if !bytes.Equal(got.raw, data) || got.header.Get("Content-MD5") != hexMD5(data) {
			t.Fatalf("download from %s: %d bytes", a.config.NodeName, len(got.raw))
		}
	}
}

// statBlob is how many bytes a blob of the agent's server uses on disk.
func statBlob(a *Agent, hash string) (int64, error) {
	st, err := os.Stat(filepath.Join(a.Server().ImageStore().Dir(), "sha512", hash))
	if err != nil {
		return 0, err
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return sys.Blocks * 512, nil
	}
	return st.Size(), nil
}

// serverAgents starts n server agents that form one cluster.
func serverAgents(t *testing.T, n int) []*Agent {
	t.Helper()
	var out []*Agent
	for i := 0; i < n; i++ {
		zero := 0
		cfg := &Config{NodeName: fmt.Sprintf("srv%d", i), DataDir: t.TempDir(), BindAddr: "127.0.0.1",
			Ports:  &PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
			Server: &ServerConfig{Enabled: true, BootstrapExpect: n}}
		if i > 0 {
			cfg.Server.RetryJoin = []string{out[0].GossipAddr()}
		}
		if err := cfg.Finalize(); err != nil {
			t.Fatal(err)
		}
		a, err := New(cfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Shutdown() })
		out = append(out, a)
	}
	waitFor(t, "a leader", func() error {
		for _, a := range out {
			if a.Server().IsLeader() {
				return nil
			}
		}
		return fmt.Errorf("no leader")
	})
	return out
}
