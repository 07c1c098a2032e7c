package nova

import (
	"reflect"
	"testing"
)

func TestServerTopology(t *testing.T) {
	h := newHarness(t)
	_, mine, theirs := addHostAndServers(h)
	path := "/compute/v2.1/servers/" + mine.ID + "/topology"
	h.req("GET", path, memberTok, "2.77", nil).fault(t, 404, "itemNotFound", msgNotFound)
	for _, tok := range []string{readerTok, adminTok} {
		r := h.req("GET", path, tok, "2.78", nil).expect(t, 200)
		if want := map[string]any{"nodes": []any{}, "pagesize_kb": nil}; !reflect.DeepEqual(r.body, want) {
			t.Fatalf("topology %s", r.raw)
		}
	}
	h.req("GET", "/compute/v2.1/servers/"+theirs.ID+"/topology", memberTok, "2.78", nil).expect(t, 404)
	h.req("GET", path, noRoleTok, "2.78", nil).fault(t, 403, "forbidden", "compute:server:topology:index")
}
