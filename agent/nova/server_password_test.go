package nova

import (
	"encoding/base64"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestServerPasswordAndUserDataAgainstARealServer creates a server with
// user data and a config drive, then reads and clears the password its
// guest posted (stored by the servers as the metadata service does).
func TestServerPasswordAndUserDataAgainstARealServer(t *testing.T) {
	h, s := newRealHarness(t, "hv-1")
	userData := "#cloud-config\nhostname: pw\n"
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "pw", "imageRef": "cirros", "flavorRef": "1", "config_drive": true,
		"user_data": base64.StdEncoding.EncodeToString([]byte(userData))}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	view := waitServer(h, id, "ACTIVE")
	if view["config_drive"] != "True" || view["OS-EXT-SRV-ATTR:user_data"] != base64.StdEncoding.EncodeToString([]byte(userData)) {
		t.Fatalf("config_drive %v user_data %v", view["config_drive"], view["OS-EXT-SRV-ATTR:user_data"])
	}
	var got structs.SingleInstanceResponse
	if err := s.RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Instance.UserData != userData || !got.Instance.ConfigDrive {
		t.Fatalf("stored user data %q config drive %v", got.Instance.UserData, got.Instance.ConfigDrive)
	}

	path := "/compute/v2.1/servers/" + id + "/os-server-password"
	if pw := h.req("GET", path, memberTok, "", nil).expect(t, 200).body["password"]; pw != "" {
		t.Fatalf("password before the guest posted one: %v", pw)
	}
	var out structs.GenericResponse
	if err := s.RPC("Instance.SetPassword", &structs.InstancePasswordRequest{InstanceID: id, Password: "ZW5jcnlwdGVk"}, &out); err != nil {
		t.Fatal(err)
	}
	r = h.req("GET", path, readerTok, "", nil).expect(t, 200)
	sameShape(t, "os-server-password", r.body, sample(t, "os-server-password/get-password-resp.json"))
	if r.body["password"] != "ZW5jcnlwdGVk" {
		t.Fatalf("password %v", r.body["password"])
	}
	h.req("GET", path, otherTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")
	h.req("DELETE", path, readerTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-server-password:clear")
	h.req("DELETE", path, memberTok, "", nil).expect(t, 204)
	if pw := h.req("GET", path, memberTok, "", nil).expect(t, 200).body["password"]; pw != "" {
		t.Fatalf("password after clear: %v", pw)
	}
	h.req("GET", "/compute/v2.1/servers/nope/os-server-password", memberTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")
}
