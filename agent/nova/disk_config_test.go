package nova

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestDiskConfigHonoured: OS-DCF:diskConfig given on create, update,
// rebuild and resize is what the server shows afterwards, and a value
// other than AUTO or MANUAL is Nova's schema 400.
func TestDiskConfigHonoured(t *testing.T) {
	h, _ := newRealHarness(t, "hv-1", "hv-2")
	h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "dcf", "imageRef": "cirros", "flavorRef": "1", "OS-DCF:diskConfig": "BAD"}}).
		fault(t, 400, "badRequest", "Invalid input for field/attribute OS-DCF:diskConfig. Value: BAD. 'BAD' is not one of ['AUTO', 'MANUAL']")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "dcf", "imageRef": "cirros", "flavorRef": "1", "OS-DCF:diskConfig": "AUTO"}}).expect(t, 202)
	if got := r.obj("server")["OS-DCF:diskConfig"]; got != "AUTO" {
		t.Fatalf("create answer's diskConfig %v", got)
	}
	id := r.obj("server")["id"].(string)
	if s := waitServer(h, id, "ACTIVE"); s["OS-DCF:diskConfig"] != "AUTO" {
		t.Fatalf("created AUTO, shows %v", s["OS-DCF:diskConfig"])
	}
	r = h.req("PUT", "/compute/v2.1/servers/"+id, memberTok, "", map[string]any{"server": map[string]any{"OS-DCF:diskConfig": "MANUAL"}}).expect(t, 200)
	if got := r.obj("server")["OS-DCF:diskConfig"]; got != "MANUAL" {
		t.Fatalf("update answer's diskConfig %v", got)
	}
	r = act(h, id, memberTok, "", `{"rebuild": {"imageRef": "cirros", "OS-DCF:diskConfig": "AUTO"}}`).expect(t, 202)
	if got := r.obj("server")["OS-DCF:diskConfig"]; got != "AUTO" {
		t.Fatalf("rebuild answer's diskConfig %v", got)
	}
	if s := waitServer(h, id, "ACTIVE"); s["OS-DCF:diskConfig"] != "AUTO" {
		t.Fatalf("rebuilt AUTO, shows %v", s["OS-DCF:diskConfig"])
	}
	act(h, id, memberTok, "", `{"resize": {"flavorRef": "2", "OS-DCF:diskConfig": "MANUAL"}}`).expect(t, 202)
	if s := waitServer(h, id, "VERIFY_RESIZE"); s["OS-DCF:diskConfig"] != "MANUAL" {
		t.Fatalf("resized MANUAL, shows %v", s["OS-DCF:diskConfig"])
	}
	act(h, id, memberTok, "", `{"confirmResize": null}`).expect(t, 204)
	if s := waitServer(h, id, "ACTIVE"); s["OS-DCF:diskConfig"] != "MANUAL" {
		t.Fatalf("confirmed MANUAL, shows %v", s["OS-DCF:diskConfig"])
	}
}

// TestDiskConfigFromImage: without OS-DCF:diskConfig a server takes its
// image's auto_disk_config property; an image that disables it refuses
// AUTO with Nova's 400.
func TestDiskConfigFromImage(t *testing.T) {
	h, s := newRealHarness(t, "hv-1")
	img := func(id, name, auto string) {
		registerImage(t, s, &structs.Image{ID: id, Name: name, Visibility: structs.ImagePublic, Owner: "p-admin",
			DiskFormat: "qcow2", ContainerFormat: "bare", Properties: map[string]string{"auto_disk_config": auto}})
	}
	img("20000000-0000-0000-0000-000000000001", "grows", "True")
	img("20000000-0000-0000-0000-000000000002", "fixed", "disabled")
	boot := func(image string, extra map[string]any) *response {
		srv := map[string]any{"name": "dcf", "imageRef": image, "flavorRef": "1"}
		for k, v := range extra {
			srv[k] = v
		}
		return h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": srv})
	}
	if got := boot("20000000-0000-0000-0000-000000000001", nil).expect(t, 202).obj("server")["OS-DCF:diskConfig"]; got != "AUTO" {
		t.Fatalf("image with auto_disk_config True: %v", got)
	}
	if got := boot("20000000-0000-0000-0000-000000000002", nil).expect(t, 202).obj("server")["OS-DCF:diskConfig"]; got != "MANUAL" {
		t.Fatalf("image with auto_disk_config disabled: %v", got)
	}
	boot("20000000-0000-0000-0000-000000000002", map[string]any{"OS-DCF:diskConfig": "AUTO"}).
		fault(t, 400, "badRequest", "Requested image 20000000-0000-0000-0000-000000000002 has automatic disk resize disabled.")
	id := boot("20000000-0000-0000-0000-000000000002", map[string]any{"OS-DCF:diskConfig": "MANUAL"}).expect(t, 202).obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	// A resize checks the server's image, a rebuild its new one.
	act(h, id, memberTok, "", `{"resize": {"flavorRef": "2", "OS-DCF:diskConfig": "AUTO"}}`).
		fault(t, 400, "badRequest", "Requested image 20000000-0000-0000-0000-000000000002 has automatic disk resize disabled.")
	act(h, id, memberTok, "", `{"rebuild": {"imageRef": "20000000-0000-0000-0000-000000000002", "OS-DCF:diskConfig": "AUTO"}}`).
		fault(t, 400, "badRequest", "Requested image 20000000-0000-0000-0000-000000000002 has automatic disk resize disabled.")
	r := act(h, id, memberTok, "", `{"rebuild": {"imageRef": "20000000-0000-0000-0000-000000000001", "OS-DCF:diskConfig": "AUTO"}}`).expect(t, 202)
	if got := r.obj("server")["OS-DCF:diskConfig"]; got != "AUTO" {
		t.Fatalf("rebuilt onto an image allowing AUTO: %v", got)
	}
}
