package nova

import (
	"strings"
	"testing"
)

// TestLegacyV2API: /v2 is the v2.1 API at 2.1 whatever the headers ask,
// answering no microversion headers, linking under /v2, and dropping a
// body's unknown properties where /v2.1 refuses them.
func TestLegacyV2API(t *testing.T) {
	h := newHarness(t)
	h.req("GET", "/compute/v2/flavors", "", "", nil).fault(t, 401, "unauthorized", msgAuthRequired)
	for _, prefix := range []string{"/compute/v2", "/compute/v2/p-demo"} {
		r := h.req("GET", prefix+"/flavors/1", memberTok, "2.60", nil).expect(t, 200)
		if r.header.Get("OpenStack-API-Version") != "" || r.header.Get("X-OpenStack-Nova-API-Version") != "" {
			t.Fatalf("%s: version headers %v", prefix, r.header)
		}
		fl := r.obj("flavor")
		if _, ok := fl["description"]; ok {
			t.Fatalf("%s: a 2.55 field at 2.1: %v", prefix, fl)
		}
		self := fl["links"].([]any)[0].(map[string]any)["href"].(string)
		if self != h.srv.URL+prefix+"/flavors/1" {
			t.Fatalf("%s: self link %s", prefix, self)
		}
	}
	body := map[string]any{"keypair": map[string]any{"name": "legacy", "bogus": 1}, "extra": true}
	h.req("POST", "/compute/v2.1/os-keypairs", memberTok, "", body).
		fault(t, 400, "badRequest", "Additional properties are not allowed")
	r := h.req("POST", "/compute/v2/os-keypairs", memberTok, "2.10", body).expect(t, 200)
	if kp := r.obj("keypair"); kp["name"] != "legacy" || !strings.Contains(kp["private_key"].(string), "PRIVATE KEY") {
		t.Fatalf("keypair %v", kp)
	}
	h.req("GET", "/compute/v2/nothing-here", memberTok, "", nil).fault(t, 404, "itemNotFound", msgNotFound)
	h.req("GET", "/compute/v3/flavors", memberTok, "", nil).fault(t, 404, "itemNotFound", msgNotFound)
}
