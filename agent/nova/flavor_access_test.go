package nova

import (
	"testing"
)

// TestFlavorAccessAgainstARealServer: a private flavor is invisible to
// a project until an admin gives it access, then it lists, shows and
// boots; Nova's refusals for public flavors, duplicates and members.
func TestFlavorAccessAgainstARealServer(t *testing.T) {
	h, _ := newRealHarness(t, "hv-1")
	h.req("POST", "/compute/v2.1/flavors", adminTok, "", map[string]any{"flavor": map[string]any{
		"name": "gold", "id": "gold", "ram": 512, "vcpus": 1, "disk": 1, "os-flavor-access:is_public": false}}).expect(t, 200)
	h.req("GET", "/compute/v2.1/flavors/gold", memberTok, "", nil).expect(t, 404)
	boot := func(status int) *response {
		return h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
			"name": "vm", "imageRef": "cirros", "flavorRef": "gold"}}).expect(t, status)
	}
	boot(400)

	access := func(body string) *response {
		return h.req("POST", "/compute/v2.1/flavors/gold/action", adminTok, "", body)
	}
	if got := access(`{"addTenantAccess": {"tenant": "p-demo"}}`).expect(t, 200).list("flavor_access"); len(got) != 1 ||
		got[0].(map[string]any)["tenant_id"] != "p-demo" || got[0].(map[string]any)["flavor_id"] != "gold" {
		t.Fatalf("after add: %v", got)
	}
	access(`{"addTenantAccess": {"tenant": "p-demo"}}`).fault(t, 409, "conflictingRequest", "Flavor access already exists for flavor gold and project p-demo combination.")
	access(`{"addTenantAccess": {"tenant": "p-other"}}`).expect(t, 200)
	if got := h.req("GET", "/compute/v2.1/flavors/gold/os-flavor-access", adminTok, "", nil).expect(t, 200).list("flavor_access"); len(got) != 2 {
		t.Fatalf("access list %v", got)
	}
	h.req("GET", "/compute/v2.1/flavors/gold/os-flavor-access", memberTok, "", nil).fault(t, 403, "forbidden", "")
	h.req("POST", "/compute/v2.1/flavors/gold/action", memberTok, "", `{"addTenantAccess": {"tenant": "p-demo"}}`).fault(t, 403, "forbidden", "")

	h.req("GET", "/compute/v2.1/flavors/gold", memberTok, "", nil).expect(t, 200)
	found := false
	for _, f := range h.req("GET", "/compute/v2.1/flavors", memberTok, "", nil).expect(t, 200).list("flavors") {
		found = found || f.(map[string]any)["id"] == "gold"
	}
	if !found {
		t.Fatal("the member's flavor list lacks the private flavor it may use")
	}
	id := boot(202).obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")

	access(`{"removeTenantAccess": {"tenant": "p-demo"}}`).expect(t, 200)
	access(`{"removeTenantAccess": {"tenant": "p-demo"}}`).fault(t, 404, "itemNotFound", "Flavor access not found for gold / p-demo combination.")
	h.req("GET", "/compute/v2.1/flavors/gold", memberTok, "", nil).expect(t, 404)
	access(`{"addTenantAccess": {}}`).fault(t, 400, "badRequest", "")
	access(`{"explode": {"tenant": "x"}}`).fault(t, 400, "badRequest", "")
	h.req("POST", "/compute/v2.1/flavors/nope/action", adminTok, "", `{"addTenantAccess": {"tenant": "x"}}`).expect(t, 404)

	h.req("GET", "/compute/v2.1/flavors/1/os-flavor-access", adminTok, "", nil).fault(t, 404, "itemNotFound", "Access list not available for public flavors.")
	h.req("POST", "/compute/v2.1/flavors/1/action", adminTok, "", `{"addTenantAccess": {"tenant": "p-demo"}}`).fault(t, 409, "conflictingRequest", "Can not add access to a public flavor.")
}
