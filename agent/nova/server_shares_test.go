package nova

import (
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestServerShares: 2.97's shares answer as a Nova host without
// virtiofs: none attached, an attach to a stopped server refused as not
// configured, any share not found; the state checks and the schema come
// first, as in Nova.
func TestServerShares(t *testing.T) {
	h := newHarness(t)
	_, mine, theirs := addHostAndServers(h)
	base := "/compute/v2.1/servers/" + mine.ID + "/shares"
	const share = "e8debdc0-447a-4376-a10a-4cd9122d7986"
	body := map[string]any{"share": map[string]any{"share_id": share, "tag": "data-1"}}

	h.req("GET", base, memberTok, "2.96", nil).fault(t, 404, "itemNotFound", msgNotFound)
	r := h.req("GET", base, readerTok, "2.97", nil).expect(t, 200)
	if want := map[string]any{"shares": []any{}}; !reflect.DeepEqual(r.body, want) {
		t.Fatalf("shares %s", r.raw)
	}
	h.req("GET", base+"/"+share, readerTok, "2.97", nil).fault(t, 404, "itemNotFound", "Share "+share+" could not be found.")
	h.req("GET", "/compute/v2.1/servers/"+theirs.ID+"/shares", memberTok, "2.97", nil).expect(t, 404)
	h.req("POST", base, readerTok, "2.97", body).fault(t, 403, "forbidden", "compute:server:shares:create")

	// Attach: schema, then the state (stopped only), then the host.
	h.req("POST", base, memberTok, "2.97", map[string]any{"share": map[string]any{"share_id": "x"}}).fault(t, 400, "badRequest", "is not a 'uuid'")
	h.req("POST", base, memberTok, "2.97", map[string]any{"share": map[string]any{"share_id": share, "tag": "a b"}}).fault(t, 400, "badRequest", "does not match")
	h.req("POST", base, memberTok, "2.97", map[string]any{"share": map[string]any{}}).fault(t, 400, "badRequest", "'share_id' is a required property")
	h.req("POST", base, memberTok, "2.97", body).fault(t, 409, "conflictingRequest",
		"Cannot 'create share' instance "+mine.ID+" while it is in vm_state active")
	h.req("DELETE", base+"/"+share, memberTok, "2.97", nil).fault(t, 409, "conflictingRequest",
		"Cannot 'delete share' instance "+mine.ID+" while it is in vm_state active")
	h.setInst(mine.ID, func(i *structs.Instance) { i.VMState = structs.VMStateStopped })
	h.req("POST", base, memberTok, "2.97", body).fault(t, 409, "conflictingRequest", msgSharesNotConfigured)
	h.req("DELETE", base+"/"+share, memberTok, "2.97", nil).fault(t, 404, "itemNotFound", "Share "+share+" could not be found.")
	h.setInst(mine.ID, func(i *structs.Instance) { i.VMState = structs.VMStateError })
	h.req("DELETE", base+"/"+share, memberTok, "2.97", nil).expect(t, 404)
}
