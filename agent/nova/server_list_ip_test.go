package nova

import (
	"fmt"
	"sort"
	"testing"
)

// listedIDs lists servers with the query as token, and returns their IDs
// sorted.
func listedIDs(h *harness, token, version, query string) []string {
	h.t.Helper()
	r := h.req("GET", "/compute/v2.1/servers?"+query, token, version, nil).expect(h.t, 200)
	var ids []string
	for _, s := range r.list("servers") {
		ids = append(ids, s.(map[string]any)["id"].(string))
	}
	sort.Strings(ids)
	return ids
}

// TestServerListIPAndProjectFilters: ip and ip6 are regular expressions
// matched from the start of a fixed address (Nova's _ip_filter; a
// floating address is not one), a bad expression is the query schema's
// 400; admins listing all_tenants narrow by tenant_id or project_id.
func TestServerListIPAndProjectFilters(t *testing.T) {
	h, s := newRealHarness(t, "hv-1")
	public := publicNetwork(t, s)
	private := makePrivate(t, s, public)
	onIP := func(token, ip string) string {
		r := boot(h, token, "2.37", map[string]any{"networks": []any{map[string]any{"uuid": private.ID, "fixed_ip": ip}}}).expect(t, 202)
		return r.obj("server")["id"].(string)
	}
	a, b, other := onIP(memberTok, "10.0.0.17"), onIP(memberTok, "10.0.0.171"), onIP(otherTok, "10.0.0.18")
	for _, id := range []string{a, b} {
		waitServer(h, id, "ACTIVE")
	}
	waitServer(h, other, "ACTIVE")
	r := h.req("POST", "/compute/v2.1/os-floating-ips", memberTok, "", map[string]any{"pool": "public"}).expect(t, 200)
	fip := r.obj("floating_ip")["ip"].(string)
	h.req("POST", "/compute/v2.1/servers/"+a+"/action", memberTok, "", map[string]any{"addFloatingIp": map[string]any{"address": fip}}).expect(t, 202)

	sorted := func(ids ...string) string { sort.Strings(ids); return fmt.Sprint(ids) }
	for query, want := range map[string]string{
		"ip=10.0.0.17":    sorted(a, b),
		"ip=10.0.0.17$":   sorted(a),
		"ip=10%5C.0%5C.0": sorted(a, b),
		"ip=0.0.17":       "[]",
		"ip=" + fip:       "[]",
		"ip=.*171":        sorted(b),
		"ip6=10.0.0.17":   "[]",
	} {
		if got := fmt.Sprint(listedIDs(h, memberTok, "2.5", query)); got != want {
			t.Errorf("%s: %s, want %s", query, got, want)
		}
	}
	h.req("GET", "/compute/v2.1/servers?ip=(", memberTok, "", nil).
		fault(t, 400, "badRequest", "Invalid input for query parameters ip. Value: (. '(' is not a 'regex'")

	for query, want := range map[string]string{
		"all_tenants=1&tenant_id=p-other":          sorted(other),
		"all_tenants=1&project_id=p-demo":          sorted(a, b),
		"all_tenants=1&project_id=p-demo&ip=.*18$": "[]",
		"all_tenants=1&ip=10.0.0.1[78]$":           sorted(a, other),
		"tenant_id=p-other":                        "[]",
	} {
		if got := fmt.Sprint(listedIDs(h, adminTok, "", query)); got != want {
			t.Errorf("admin %s: %s, want %s", query, got, want)
		}
	}
}
