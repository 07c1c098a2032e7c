package nova

import (
	"reflect"
	"testing"
)

func TestExtensionsListNovasExtensions(t *testing.T) {
	h := newHarness(t)
	r := h.req("GET", "/compute/v2.1/extensions", readerTok, "2.100", nil).expect(t, 200)
	if want := sample(t, "extension-info/extensions-list-resp.json"); !reflect.DeepEqual(r.body, want) {
		t.Fatalf("extensions differ from Nova's:\n%s", r.raw)
	}
	// The legacy v2 API lists OS-EXT-VIF-NET too, in alias order.
	r = h.req("GET", "/compute/v2/extensions", noRoleTok, "", nil).expect(t, 200)
	if want := sample(t, "extension-info/extensions-list-resp-v21-compatible.json"); !reflect.DeepEqual(r.body, want) {
		t.Fatalf("legacy extensions differ from Nova's:\n%s", r.raw)
	}
	r = h.req("GET", "/compute/v2.1/extensions/os-agents", noRoleTok, "", nil).expect(t, 200)
	if want := sample(t, "extension-info/extensions-get-resp.json"); !reflect.DeepEqual(r.body, want) {
		t.Fatalf("os-agents: %s", r.raw)
	}
	if r = h.req("GET", "/compute/v2.1/extensions/OS-DCF?x=1", memberTok, "", nil).expect(t, 200); r.obj("extension")["name"] != "DiskConfig" {
		t.Fatalf("OS-DCF: %s", r.raw)
	}
	h.req("GET", "/compute/v2/extensions/OS-EXT-VIF-NET", memberTok, "", nil).expect(t, 200)
	for _, alias := range []string{"OS-EXT-VIF-NET", "os-AGENTS", "unknown"} {
		h.req("GET", "/compute/v2.1/extensions/"+alias, memberTok, "", nil).fault(t, 404, "itemNotFound", msgNotFound)
	}
	h.req("GET", "/compute/v2.1/extensions", "", "", nil).expect(t, 401)
}
