package nova

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/stratus-cloud/stratus/imagestore"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

func registerImage(t *testing.T, s *server.Server, img *structs.Image, members ...*structs.ImageMember) *structs.Image {
	t.Helper()
	out, err := s.RegisterImage(img, bytes.NewReader(imagestore.EmptyQCOW2(64<<20)))
	if err != nil {
		t.Fatalf("register %s: %v", img.Name, err)
	}
	for _, m := range members {
		var resp structs.SingleImageMemberResponse
		if err := s.RPC("Image.Member", &structs.ImageMemberRequest{Entry: &structs.ImageMemberEntry{Create: true, Member: m}}, &resp); err != nil {
			t.Fatal(err)
		}
		if err := s.RPC("Image.Member", &structs.ImageMemberRequest{Entry: &structs.ImageMemberEntry{Member: m}}, &resp); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestImageProxyAndServerImageRefs(t *testing.T) {
	h, s := newRealHarness(t)
	img := func(id, name, vis, owner string) *structs.Image {
		return &structs.Image{ID: id, Name: name, Visibility: vis, Owner: owner, DiskFormat: "qcow2", ContainerFormat: "bare",
			Properties: map[string]string{"architecture": "x86_64"}}
	}
	pub := img("10000000-0000-0000-0000-000000000001", "cirros", structs.ImagePublic, "p-admin")
	pub.Properties["auto_disk_config"] = "True"
	pub = registerImage(t, s, pub)
	mine := registerImage(t, s, img("10000000-0000-0000-0000-000000000002", "mine", structs.ImagePrivate, "p-demo"))
	theirs := registerImage(t, s, img("10000000-0000-0000-0000-000000000003", "theirs", structs.ImagePrivate, "p-other"))
	shared := registerImage(t, s, img("10000000-0000-0000-0000-000000000004", "shared", structs.ImageShared, "p-other"),
		&structs.ImageMember{ImageID: "10000000-0000-0000-0000-000000000004", MemberID: "p-demo", Status: structs.MemberAccepted})
	hidden := img("10000000-0000-0000-0000-000000000005", "hidden", structs.ImagePublic, "p-admin")
	hidden.Hidden = true
	registerImage(t, s, hidden)

	names := func(r *response) map[string]bool {
		out := map[string]bool{}
		for _, i := range r.list("images") {
			out[i.(map[string]any)["name"].(string)] = true
		}
		return out
	}
	r := h.req("GET", "/compute/v2.1/images", memberTok, "", nil).expect(t, http.StatusOK)
	if got := names(r); len(got) != 3 || !got["cirros"] || !got["mine"] || !got["shared"] {
		t.Fatalf("member's list: %v", got)
	}
	sameShape(t, "images list", r.body, sample(t, "images/images-list-get-resp.json"))
	r = h.req("GET", "/compute/v2.1/images/detail", adminTok, "", nil).expect(t, http.StatusOK)
	if got := names(r); len(got) != 4 || got["hidden"] {
		t.Fatalf("admin's list: %v", got)
	}
	sameShape(t, "images detail", r.body, sample(t, "images/images-details-get-resp.json"))
	r = h.req("GET", "/compute/v2.1/images/detail?name=cirros&limit=1", memberTok, "", nil).expect(t, http.StatusOK)
	if got := names(r); len(got) != 1 || !got["cirros"] || r.body["images_links"] == nil {
		t.Fatalf("filtered page: %s", r.raw)
	}

	r = h.req("GET", "/compute/v2.1/images/"+pub.ID, memberTok, "", nil).expect(t, http.StatusOK)
	sameShape(t, "image", r.body, sample(t, "images/image-get-resp.json"))
	if v := r.obj("image"); v["status"] != "ACTIVE" || v["progress"] != float64(100) || v["OS-DCF:diskConfig"] != "AUTO" ||
		v["OS-EXT-IMG-SIZE:size"] != float64(pub.Size) || r.obj("image", "metadata")["architecture"] != "x86_64" {
		t.Fatalf("image view: %s", r.raw)
	}
	h.req("GET", "/compute/v2.1/images/"+theirs.ID, memberTok, "", nil).fault(t, http.StatusNotFound, "itemNotFound", "Image not found.")
	h.req("GET", "/compute/v2.1/images/"+shared.ID, memberTok, "", nil).expect(t, http.StatusOK)
	h.req("GET", "/compute/v2.1/images/nope", memberTok, "", nil).fault(t, http.StatusNotFound, "itemNotFound", "Image not found.")
	// Gone from 2.36, metadata from 2.39.
	h.req("GET", "/compute/v2.1/images", memberTok, "2.36", nil).fault(t, http.StatusNotFound, "itemNotFound", "")
	h.req("GET", "/compute/v2.1/images/"+pub.ID+"/metadata", memberTok, "2.38", nil).expect(t, http.StatusOK)
	h.req("GET", "/compute/v2.1/images/"+pub.ID+"/metadata", memberTok, "2.39", nil).fault(t, http.StatusNotFound, "itemNotFound", "")

	// Metadata of the project's own image; not of the public one.
	base := "/compute/v2.1/images/" + mine.ID + "/metadata"
	r = h.req("POST", base, memberTok, "", map[string]any{"metadata": map[string]string{"os_distro": "cirros"}}).expect(t, http.StatusOK)
	if m := r.obj("metadata"); m["os_distro"] != "cirros" || m["architecture"] != "x86_64" {
		t.Fatalf("merged %s", r.raw)
	}
	h.req("PUT", base+"/os_distro", memberTok, "", map[string]any{"meta": map[string]string{"os_distro": "debian"}}).expect(t, http.StatusOK)
	h.req("PUT", base+"/os_distro", memberTok, "", map[string]any{"meta": map[string]string{"other": "x"}}).
		fault(t, http.StatusBadRequest, "badRequest", "Request body and URI mismatch")
	r = h.req("GET", base+"/os_distro", memberTok, "", nil).expect(t, http.StatusOK)
	if r.obj("meta")["os_distro"] != "debian" {
		t.Fatalf("meta %s", r.raw)
	}
	r = h.req("PUT", base, memberTok, "", map[string]any{"metadata": map[string]string{"a": "1"}}).expect(t, http.StatusOK)
	if len(r.obj("metadata")) != 1 {
		t.Fatalf("replaced %s", r.raw)
	}
	h.req("DELETE", base+"/a", memberTok, "", nil).expect(t, http.StatusNoContent)
	h.req("DELETE", base+"/a", memberTok, "", nil).fault(t, http.StatusNotFound, "itemNotFound", "has no metadata item a")
	h.req("POST", "/compute/v2.1/images/"+pub.ID+"/metadata", memberTok, "", map[string]any{"metadata": map[string]string{"x": "y"}}).
		fault(t, http.StatusForbidden, "forbidden", "")
	h.req("POST", base, readerTok, "", map[string]any{"metadata": map[string]string{"x": "y"}}).
		fault(t, http.StatusForbidden, "forbidden", "os_compute_api:image-metadata:create")

	// Servers name their image by id or unambiguous name, as the
	// caller sees images.
	r = h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, http.StatusAccepted)
	id := r.obj("server")["id"].(string)
	r = h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "", nil).expect(t, http.StatusOK)
	if r.obj("server", "image")["id"] != pub.ID {
		t.Fatalf("server image %s", r.raw)
	}
	h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "nope", "flavorRef": "1"}}).fault(t, http.StatusBadRequest, "badRequest", "Image nope could not be found.")
	h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": theirs.ID, "flavorRef": "1"}}).fault(t, http.StatusBadRequest, "badRequest", "Image "+theirs.ID+" could not be found.")
	h.req("POST", "/compute/v2.1/servers", adminTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": h.srv.URL + "/compute/images/" + theirs.ID, "flavorRef": "1"}}).expect(t, http.StatusAccepted)

	// Deletes: the project's own image; a protected one is refused.
	h.req("DELETE", "/compute/v2.1/images/"+pub.ID, memberTok, "", nil).fault(t, http.StatusForbidden, "forbidden", "You are not allowed to delete the image.")
	prot := mine.Copy()
	prot.Protected = true
	if err := s.RPC("Image.Update", &structs.ImageUpdateRequest{Image: prot}, &structs.SingleImageResponse{}); err != nil {
		t.Fatal(err)
	}
	h.req("DELETE", "/compute/v2.1/images/"+mine.ID, memberTok, "", nil).fault(t, http.StatusForbidden, "forbidden", "You are not allowed to delete the image.")
	h.req("DELETE", "/compute/v2.1/images/"+shared.ID, adminTok, "", nil).expect(t, http.StatusNoContent)
	h.req("GET", "/compute/v2.1/images/"+shared.ID, adminTok, "", nil).fault(t, http.StatusNotFound, "itemNotFound", "Image not found.")
}
