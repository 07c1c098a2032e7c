package nova

import (
	"fmt"
	"testing"
)

// TestAccessIPv6AndRuleCIDRNormalised: accessIPv6 is stored in its
// compressed form, as Nova's IPAddress field stores it, on create and
// update; a security group rule's cidr becomes its network address, and
// one that is not a network is Nova's InvalidCidr 400.
func TestAccessIPv6AndRuleCIDRNormalised(t *testing.T) {
	h, _ := newRealHarness(t, "hv-1")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "aip", "imageRef": "cirros", "flavorRef": "1", "accessIPv6": "0:0:0:0:0:babe:dc0c:1602"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	if s := waitServer(h, id, "ACTIVE"); s["accessIPv6"] != "::babe:dc0c:1602" {
		t.Fatalf("accessIPv6 %v", s["accessIPv6"])
	}
	r = h.req("PUT", "/compute/v2.1/servers/"+id, memberTok, "", map[string]any{"server": map[string]any{
		"accessIPv6": "2001:0DB8:0000:0000:0000:0000:0000:0001"}}).expect(t, 200)
	if got := r.obj("server")["accessIPv6"]; got != "2001:db8::1" {
		t.Fatalf("updated accessIPv6 %v", got)
	}

	r = h.req("POST", "/compute/v2.1/os-security-groups", memberTok, "", map[string]any{"security_group": map[string]any{
		"name": "web", "description": "w"}}).expect(t, 200)
	group := r.obj("security_group")["id"]
	rule := func(cidr string) *response {
		return h.req("POST", "/compute/v2.1/os-security-group-rules", memberTok, "", map[string]any{"security_group_rule": map[string]any{
			"parent_group_id": group, "ip_protocol": "tcp", "from_port": 22, "to_port": 22, "cidr": cidr}})
	}
	for cidr, want := range map[string]string{"10.0.0.5/24": "10.0.0.0/24", "2001:db8::1/64": "2001:db8::/64", "10.1.2.3%2F16": "10.1.0.0/16"} {
		r := rule(cidr).expect(t, 200)
		if got := fmt.Sprint(r.obj("security_group_rule")["ip_range"]); got != "map[cidr:"+want+"]" {
			t.Errorf("cidr %s: ip_range %s, want %s", cidr, got, want)
		}
	}
	rule("10.0.0.5").fault(t, 400, "badRequest", "10.0.0.5 is not a valid IP network.")
}
