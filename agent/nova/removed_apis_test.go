package nova

import (
	"testing"
)

func TestRemovedAPIsAnswerGone(t *testing.T) {
	h := newHarness(t)
	_, mine, _ := addHostAndServers(h)
	srv := "/compute/v2.1/servers/" + mine.ID
	for _, c := range []struct{ method, path string }{
		{"GET", "/compute/v2.1/os-agents"}, {"POST", "/compute/v2.1/os-agents"}, {"PUT", "/compute/v2.1/os-agents/1"},
		{"DELETE", "/compute/v2.1/os-agents/1"},
		{"GET", "/compute/v2.1/os-cells"}, {"GET", "/compute/v2.1/os-cells/detail"}, {"GET", "/compute/v2.1/os-cells/capacities"},
		{"GET", "/compute/v2.1/os-cells/info"}, {"GET", "/compute/v2.1/os-cells/c1/capacities"}, {"POST", "/compute/v2.1/os-cells/sync_instances"},
		{"PUT", "/compute/v2.1/os-cells/c1"}, {"DELETE", "/compute/v2.1/os-cells/c1"},
		{"GET", "/compute/v2.1/os-cloudpipe"}, {"PUT", "/compute/v2.1/os-cloudpipe/configure-project"},
		{"GET", "/compute/v2.1/os-fixed-ips/10.0.0.2"},
		{"GET", "/compute/v2.1/os-floating-ip-dns"}, {"PUT", "/compute/v2.1/os-floating-ip-dns/example.org/entries/a"},
		{"GET", "/compute/v2.1/os-floating-ips-bulk"}, {"PUT", "/compute/v2.1/os-floating-ips-bulk/delete"},
		{"GET", "/compute/v2.1/os-fping?all_tenants=1"}, {"GET", "/compute/v2.1/os-fping/" + mine.ID},
		{"GET", "/compute/v2.1/os-security-group-default-rules"}, {"DELETE", "/compute/v2.1/os-security-group-default-rules/1"},
		{"GET", srv + "/consoles"}, {"POST", srv + "/consoles"}, {"GET", srv + "/consoles/1"}, {"DELETE", srv + "/consoles/1"},
		{"GET", srv + "/os-virtual-interfaces"},
	} {
		// At any microversion, for any token: no policy applies.
		for _, version := range []string{"", "2.100"} {
			h.req(c.method, c.path, noRoleTok, version, nil).fault(t, 410, "computeFault", msgGone)
		}
	}
	h.req("POST", "/compute/v2.1/os-fixed-ips/10.0.0.2/action", memberTok, "", map[string]any{"reserve": nil}).fault(t, 410, "computeFault", msgGone)
	h.req("POST", "/compute/v2.1/os-fixed-ips/10.0.0.2/action", memberTok, "", map[string]any{"lease": nil}).
		fault(t, 400, "badRequest", "There is no such action: lease")
	h.req("POST", "/compute/v2.1/os-agents", memberTok, "", "{").fault(t, 400, "badRequest", "Malformed request body")
	h.req("GET", "/compute/v2.1/os-agents", "", "", nil).expect(t, 401)
}
