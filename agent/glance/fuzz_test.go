package glance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent/identity"
	"github.com/stratus-cloud/stratus/structs"
)

// fuzzImageID is the one image the fuzz RPC holds, owned by p-demo.
const fuzzImageID = "8a0c7d6e-5f4b-4a3c-9d2e-1f0a9b8c7d6e"

// fuzzVerifier knows two tokens: "member" (p-demo) and "admin".
type fuzzVerifier struct{}

func (fuzzVerifier) Verify(token string) (*identity.Token, error) {
	switch token {
	case "member":
		return &identity.Token{TokenClaims: structs.TokenClaims{UserID: "u-alice", ProjectID: "p-demo", Roles: []string{"member", "reader"}}}, nil
	case "admin":
		return &identity.Token{TokenClaims: structs.TokenClaims{UserID: "u-admin", ProjectID: "p-admin", Roles: []string{"admin", "member", "reader"}}}, nil
	}
	return nil, fmt.Errorf("unknown token")
}

// fuzzRPC answers the image endpoints from one image, as the servers
// would: an update or create that fails Image.Validate is invalid.
type fuzzRPC struct {
	mu  sync.Mutex
	img *structs.Image
}

func newFuzzRPC() *fuzzRPC {
	return &fuzzRPC{img: &structs.Image{ID: fuzzImageID, Name: "cirros", Status: structs.ImageActive,
		Visibility: structs.ImageShared, Owner: "p-demo", DiskFormat: "qcow2", ContainerFormat: "bare",
		Size: 1 << 20, Tags: []string{"t1"}, Properties: map[string]string{"os_distro": "cirros", "hw_disk_bus": "virtio"},
		CreatedAt: 1, UpdatedAt: 2, CreateIndex: 1, ModifyIndex: 1}}
}

func (f *fuzzRPC) RPC(method string, args, reply any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch method {
	case "Image.Get":
		if args.(*structs.ImageSpecificRequest).ImageID != f.img.ID {
			return structs.Errorf(structs.KindNotFound, "image not found")
		}
		reply.(*structs.SingleImageResponse).Image = f.img.Copy()
	case "Image.List":
		reply.(*structs.ImageListResponse).Images = []*structs.Image{f.img.Copy()}
	case "Image.MemberList":
		reply.(*structs.ImageMemberListResponse).Members = []*structs.ImageMember{
			{ImageID: f.img.ID, MemberID: "p-other", Status: "pending", CreatedAt: 1, UpdatedAt: 1}}
	case "Image.Member":
		m := *args.(*structs.ImageMemberRequest).Entry.Member
		reply.(*structs.SingleImageMemberResponse).Member = &m
	case "Image.Create", "Image.Update":
		var img *structs.Image
		if method == "Image.Create" {
			img = args.(*structs.ImageCreateRequest).Image.Copy()
			if img.ID == "" {
				img.ID = "1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d"
			}
		} else {
			img = args.(*structs.ImageUpdateRequest).Image.Copy()
		}
		if err := img.Validate(); err != nil {
			return structs.Errorf(structs.KindInvalid, "%s", err)
		}
		reply.(*structs.SingleImageResponse).Image = img
	case "S3.ImageImport":
		return structs.Errorf(structs.KindNotFound, "no such bucket")
	case "Image.Delete", "Image.Data":
	default:
		return fmt.Errorf("fuzz rpc: unknown method %s", method)
	}
	return nil
}

// glanceTarget is one request the fuzzer sends a body to; query targets
// take the input as the query string instead.
type glanceTarget struct {
	method, path, token, ctype string
	query                      bool
}

const (
	patch21 = "application/openstack-images-v2.1-json-patch"
	patch20 = "application/openstack-images-v2.0-json-patch"
)

var glanceTargets = []glanceTarget{
	{"POST", "/image/v2/images", "member", "application/json", false},
	{"PATCH", "/image/v2/images/" + fuzzImageID, "member", patch21, false},
	{"PATCH", "/image/v2/images/" + fuzzImageID, "admin", patch20, false},
	{"POST", "/image/v2/images/" + fuzzImageID + "/members", "member", "application/json", false},
	{"PUT", "/image/v2/images/" + fuzzImageID + "/members/p-other", "admin", "application/json", false},
	{"GET", "/image/v2/images", "member", "", true},
	{"POST", "/image/v2/images", "admin", "application/json", false},
}

// FuzzRequest sends arbitrary bodies to the Image API's decoders and
// validators (image create, JSON-patch updates of both media types,
// members) and arbitrary query strings to the image list, through the
// real handler over a fake RPC holding one image. The answer is never
// a panic nor a 5xx, and every 4xx is Glance's JSON error body. Run
// longer with go test -run '^$' -fuzz FuzzRequest -fuzztime 5m ./agent/glance.
func FuzzRequest(f *testing.F) {
	for _, s := range []struct {
		target uint8
		body   string
	}{
		{0, `{"name": "img", "disk_format": "qcow2", "container_format": "bare", "visibility": "private", "tags": ["a"], "min_ram": 64, "os_distro": "cirros"}`},
		{0, `{"id": "` + fuzzImageID + `", "name": null, "protected": true}`},
		{1, `[{"op": "replace", "path": "/name", "value": "new"}, {"op": "add", "path": "/hw_qemu_guest_agent", "value": "yes"}]`},
		{1, `[{"op": "remove", "path": "/os_distro"}, {"op": "add", "path": "/tags/-", "value": "t2"}]`},
		{1, `[{"op": "replace", "path": "/min_disk", "value": 2}, {"op": "replace", "path": "/visibility", "value": "public"}]`},
		{1, `[{"op": "add", "path": "/a~1b~0c", "value": "x"}, {"op": "replace", "path": "/tags", "value": ["x", "y"]}]`},
		{2, `[{"replace": "/name", "value": "v2.0"}, {"add": "/prop", "value": "v"}, {"remove": "/prop"}]`},
		{3, `{"member": "p-other"}`},
		{4, `{"status": "accepted"}`},
		{5, `limit=1&marker=` + fuzzImageID + `&sort=name:asc,created_at:desc&visibility=shared&member_status=all`},
		{5, `name=in:"a,b",c&tag=t1&status=active&size_min=1&size_max=9&created_at=gte:2020-01-01T00:00:00Z&os_hidden=false`},
		{6, `{"name": "s3", "disk_format": "raw", "container_format": "bare", "stratus_s3_source": "bucket/key"}`},
	} {
		f.Add(s.target, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, target uint8, body []byte) {
		tg := glanceTargets[int(target)%len(glanceTargets)]
		var log bytes.Buffer
		api := New(Config{RPC: newFuzzRPC(), Verifier: fuzzVerifier{},
			Logger: hclog.New(&hclog.LoggerOptions{Output: &log, Level: hclog.Error})})
		var r *http.Request
		if tg.query {
			r = httptest.NewRequest(tg.method, tg.path, nil)
			r.URL.RawQuery = string(body)
		} else {
			r = httptest.NewRequest(tg.method, tg.path, bytes.NewReader(body))
			r.Header.Set("Content-Type", tg.ctype)
		}
		r.Header.Set("X-Auth-Token", tg.token)
		w := httptest.NewRecorder()
		api.Handler().ServeHTTP(w, r)
		if strings.Contains(log.String(), "panic") || w.Code >= 500 {
			t.Fatalf("%s %s %q: status %d: %s\n%s", tg.method, tg.path, body, w.Code, w.Body, log.String())
		}
		if w.Code >= 400 {
			var e struct {
				Message, Code, Title string
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Code != fmt.Sprintf("%d %s", w.Code, http.StatusText(w.Code)) || e.Message == "" {
				t.Fatalf("%s %s %q: status %d without Glance's error body: %s", tg.method, tg.path, body, w.Code, w.Body)
			}
		}
	})
}
