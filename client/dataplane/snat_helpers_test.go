package dataplane

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

// externalNet is a flat external network on physnet1, 172.30.9.0/24,
// with no upstream gateway.
func externalNet() Network {
	ext := providerNet(structs.NetTypeFlat, 0)
	ext.External, ext.Subnets[0].CIDR, ext.Subnets[0].GatewayIP = true, "172.30.9.0/24", ""
	return ext
}

// routerOf is a router with SNAT on tenant's subnet, elected to host
// snat; gw is its gateway address on the host holding it, "" on others.
func routerOf(hosts []*vtepHost, snat int, id string, tenant, ext Network, gw string) Router {
	return Router{ID: id, Interfaces: []RouterInterface{{NetworkID: tenant.ID, CIDR: tenant.Subnets[0].CIDR}},
		ExternalNetworkID: ext.ID, GatewayIP: gw, SNAT: true, SNATHostID: hosts[snat].id, SNATTunnelIP: hosts[snat].vtep}
}

// newOutside is a namespace on physnet1 (the external network's L2)
// with addr on its eth0, recording the sources of what reaches its TCP
// port 8080 from there.
func newOutside(t *testing.T, h *vtepHost, addr string) *guest {
	t.Helper()
	outside := newNetns(t, "o")
	port := "out" + randHex(4)
	sh(t, h.underlay, "ip", "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", outside)
	sh(t, h.underlay, "ip", "link", "set", port, "master", "pn", "up")
	sh(t, outside, "ip", "addr", "add", addr, "dev", "eth0")
	sh(t, outside, "ip", "link", "set", "eth0", "up")
	g := &guest{ns: outside}
	g.recordSources(t, "eth0", 8080)
	return g
}

// recordSources makes the guest's namespace remember the source
// address of every TCP packet to port that comes in on iif.
func (g *guest) recordSources(t *testing.T, iif string, port int) {
	t.Helper()
	rules := fmt.Sprintf("table inet seen {\n set src { type ipv4_addr; flags dynamic; }\n"+
		" chain in {\n  type filter hook prerouting priority -300; policy accept;\n  iifname %q tcp dport %d add @src { ip saddr }\n }\n}\n", iif, port)
	if _, err := (runner{netns: g.ns}).runInput(t.Context(), []byte(rules), "nft", "-f", "-"); err != nil {
		t.Fatal(err)
	}
}

var setElements = regexp.MustCompile(`elements = \{([^}]*)\}`)

// sources are the addresses recordSources saw, sorted.
func (g *guest) sources(t *testing.T) []string {
	t.Helper()
	out := sh(t, g.ns, "nft", "list", "set", "inet", "seen", "src")
	m := setElements.FindStringSubmatch(out)
	if m == nil {
		return nil
	}
	var got []string
	for _, e := range strings.Split(m[1], ",") {
		if e = strings.TrimSpace(e); e != "" {
			got = append(got, e)
		}
	}
	sort.Strings(got)
	return got
}

// resetSources forgets the sources seen.
func (g *guest) resetSources(t *testing.T) {
	t.Helper()
	sh(t, g.ns, "nft", "flush", "set", "inet", "seen", "src")
}

// openPorts are rules letting any TCP in, and everything out.
var openPorts = append([]Rule{{Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", AnyRemote: true}}, egressAll...)

// routedGuest is a guest with a static address on a network, its
// default route via the subnet's gateway.
func routedGuest(t *testing.T, h *vtepHost, p tport) *guest {
	t.Helper()
	g := staticGuest(t, h, p, 1450)
	sh(t, g.ns, "ip", "route", "add", "default", "via", "10.0.0.1")
	return g
}

// newPort is an overlay port with open TCP rules.
func newPort(n Network, host int, mac, ip string) tport {
	p := overlayPort(n, host, mac, ip)
	p.ID, p.Rules = uuid.NewString(), openPorts
	return p
}
