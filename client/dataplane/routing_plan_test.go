package dataplane

import (
	"fmt"
	"strings"
	"testing"
)

// TestPlanRouting: a non-SNAT host's router table sends the default
// route to the SNAT host's bridge MAC over the network's bridge, the
// SNAT host's out of the external bridge to the upstream gateway; every
// tenant bridge ends in an unreachable rule, and a floating IP's fixed
// address looks up the router's table without its default first.
func TestPlanRouting(t *testing.T) {
	tenant, ext := overlayNet(10), externalNet()
	ext.Subnets[0].GatewayIP = "172.30.9.1"
	r := Router{ID: "r1", Interfaces: []RouterInterface{{NetworkID: tenant.ID, CIDR: "10.0.0.0/24"}}, ExternalNetworkID: ext.ID,
		SNAT: true, SNATHostID: "elected", SNATTunnelIP: "192.0.2.9"}
	other := &Plane{cfg: Config{Owner: "other"}}
	rt := other.planRouting(&Desired{Networks: []Network{tenant}, Routers: []Router{r}})
	tbl := rt.tables[routerTableKey("r1", tenant.ID)]
	br := BridgeName(tenant.ID)
	want := []tableRoute{{Table: tbl, Dst: "10.0.0.0/24", Dev: br}, {Table: tbl, Dst: "default", Via: nextHop(tbl), Dev: br}}
	if len(rt.routes) != 2 || rt.routes[0] != want[0] || rt.routes[1] != want[1] {
		t.Fatalf("non-SNAT host's routes %+v, want %+v", rt.routes, want)
	}
	if got := rt.nextHops[br][nextHop(tbl)]; got != BridgeMAC(tenant.ID, "elected") {
		t.Fatalf("next hop resolves to %q", got)
	}
	if keys := ruleKeys(rt.rules); !strings.Contains(keys, "20200|10.0.0.0/24||"+br) || !strings.Contains(keys, "20500|||"+br+"|0x0|unreachable") {
		t.Fatalf("non-SNAT host's rules:\n%s", keys)
	}

	elected := &Plane{cfg: Config{Owner: "elected"}}
	r.GatewayIP = "172.30.9.2"
	port := Port{ID: "p1", NetworkID: tenant.ID, MAC: "fa:16:3e:00:00:01", IPs: []string{"10.0.0.5"}}
	d := &Desired{Networks: []Network{tenant, ext}, Routers: []Router{r}, Ports: []Port{port},
		FloatingIPs: []FloatingIP{{Address: "172.30.9.10", FixedIP: "10.0.0.5", PortID: "p1", ExternalNetworkID: ext.ID}}}
	rt = elected.planRouting(d)
	tbl = rt.tables[routerTableKey("r1", tenant.ID)]
	e := rt.tables[extTableKey(ext.ID)]
	routes := map[tableRoute]bool{}
	for _, x := range rt.routes {
		routes[x] = true
	}
	for _, w := range []tableRoute{{Table: tbl, Dst: "default", Via: "172.30.9.1", Dev: BridgeName(ext.ID)},
		{Table: e, Dst: "default", Via: "172.30.9.1", Dev: BridgeName(ext.ID)}, {Table: e, Dst: "172.30.9.0/24", Dev: BridgeName(ext.ID)}} {
		if !routes[w] {
			t.Fatalf("SNAT host lacks %+v in %+v", w, rt.routes)
		}
	}
	keys := ruleKeys(rt.rules)
	for _, w := range []string{"20100|10.0.0.5/32||" + br + "|0x0|", "20150|10.0.0.5/32||" + br + "|0x0|", "20400|||" + BridgeName(ext.ID) + "|" + fmt.Sprintf("%#x", tbl)} {
		if !strings.Contains(keys, w) {
			t.Fatalf("SNAT host's rules lack %q:\n%s", w, keys)
		}
	}
	if len(rt.nextHops) != 0 {
		t.Fatalf("the SNAT host routes to a next hop: %v", rt.nextHops)
	}
}

// TestAllocTables: numbers are distinct, in the plane's range, and leave 169.254.169.0/24 to the metadata address.
func TestAllocTables(t *testing.T) {
	var keys []string
	for i := 0; i < 2000; i++ {
		keys = append(keys, routerTableKey("r", string(rune('a'+i%26))+strings.Repeat("x", i)))
	}
	all := allocTables(keys)
	seen := map[uint32]bool{}
	for _, n := range all {
		if seen[n] || n&tableMask != tableBase || strings.HasPrefix(nextHop(n), "169.254.169.") || n == tableBase {
			t.Fatalf("table %#x", n)
		}
		seen[n] = true
	}
}

func ruleKeys(rules []policyRule) string {
	var out []string
	for _, r := range rules {
		out = append(out, r.normalized().key())
	}
	return strings.Join(out, "\n")
}
