package dataplane

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// vtepHost is a "hypervisor" of an overlay test: a netns whose eth0 is
// on the shared underlay bridge with the address vtep, and a plane
// wiring it.
type vtepHost struct {
	// underlay is the netns of the shared bridges: ul (the underlay)
	// and pn (physnet1).
	underlay string
	id       string
	ns       string
	vtep     string
	plane    *Plane
}

// newUnderlay makes n hosts on one underlay: a netns with a bridge, and
// per host a netns joined to it by a veth, 10.99.0.<i+1>/24 on the
// host's end (the physical MTU stays 1500).
func newUnderlay(t *testing.T, n int) []*vtepHost {
	t.Helper()
	return newUnderlayWith(t, n, false)
}

// newUnderlayWith is newUnderlay; with physnet, every host also gets an
// interface eth1 on a second shared bridge (the operator's own L2),
// mapped to physical network "physnet1".
func newUnderlayWith(t *testing.T, n int, physnet bool) []*vtepHost {
	t.Helper()
	u := newNetns(t, "u")
	for _, br := range []string{"ul", "pn"} {
		sh(t, u, "ip", "link", "add", br, "type", "bridge")
		sh(t, u, "ip", "link", "set", br, "up")
	}
	var hosts []*vtepHost
	for i := 0; i < n; i++ {
		h := &vtepHost{underlay: u, id: fmt.Sprintf("host%d-%s", i, randHex(6)), ns: newNetns(t, "h"), vtep: fmt.Sprintf("10.99.0.%d", i+1)}
		port := fmt.Sprintf("ul%d", i)
		sh(t, u, "ip", "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", h.ns)
		sh(t, u, "ip", "link", "set", port, "master", "ul", "up")
		sh(t, h.ns, "ip", "addr", "add", h.vtep+"/24", "dev", "eth0")
		sh(t, h.ns, "ip", "link", "set", "eth0", "up")
		var phys map[string]string
		if physnet {
			pport := fmt.Sprintf("pn%d", i)
			sh(t, u, "ip", "link", "add", pport, "type", "veth", "peer", "name", "eth1", "netns", h.ns)
			sh(t, u, "ip", "link", "set", pport, "master", "pn", "up")
			phys = map[string]string{"physnet1": "eth1"}
		}
		p, err := New(Config{Owner: h.id, StateDir: t.TempDir(), Netns: h.ns, TunnelIP: h.vtep, PhysicalInterfaces: phys})
		if err != nil {
			t.Fatal(err)
		}
		h.plane = p
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := p.Teardown(ctx); err != nil {
				t.Errorf("teardown of %s: %v", h.id, err)
			}
		})
		hosts = append(hosts, h)
	}
	return hosts
}

// tport is a port of an overlay test's state, bound to a host.
type tport struct {
	Port
	host int
}

// desiredOf is what BuildDesired reads for a host from a state of
// networks and ports: the networks of its ports, its ports, and the
// other hosts' ports of those networks with their endpoints.
func desiredOf(hosts []*vtepHost, host int, nets []Network, ports []tport) *Desired {
	d := &Desired{}
	mine := map[string]bool{}
	for _, p := range ports {
		if p.host == host {
			d.Ports = append(d.Ports, p.Port)
			mine[p.NetworkID] = true
		}
	}
	for _, n := range nets {
		if mine[n.ID] {
			d.Networks = append(d.Networks, n)
		}
	}
	for _, p := range ports {
		if p.host != host && mine[p.NetworkID] {
			d.Remote = append(d.Remote, RemotePort{ID: p.ID, NetworkID: p.NetworkID, MAC: p.MAC, IPs: p.IPs,
				HostID: hosts[p.host].id, TunnelIP: hosts[p.host].vtep})
		}
	}
	return d
}

// applyAll applies every host's desired state.
func applyAll(t *testing.T, hosts []*vtepHost, nets []Network, ports []tport) {
	t.Helper()
	for i, h := range hosts {
		apply(t, h.plane, desiredOf(hosts, i, nets, ports))
	}
}

// fdbOf reads the remote forwarding entries of a VXLAN device in a
// netns ("mac dst" strings), nil when the device does not exist.
func fdbOf(t *testing.T, ns, dev string) []string {
	t.Helper()
	out, err := tryIn(ns, 30*time.Second, "bridge", "-j", "fdb", "show", "dev", dev)
	if err != nil {
		return nil
	}
	var entries []fdbEntry
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatalf("bridge fdb show: %v %s", err, out)
	}
	var got []string
	for _, e := range entries {
		if e.Dst != "" {
			got = append(got, e.MAC+" "+e.Dst)
		}
	}
	return sortedUnique(got)
}

// staticGuest is a guest with a fixed address (no DHCP) and the
// overlay's MTU.
func staticGuest(t *testing.T, h *vtepHost, p tport, mtu int) *guest {
	t.Helper()
	g := newGuest(t, h.ns, p.ID, p.MAC)
	sh(t, g.ns, "ip", "link", "set", "eth0", "mtu", fmt.Sprint(mtu))
	sh(t, g.ns, "ip", "addr", "add", p.IPs[0]+"/24", "dev", "eth0")
	return g
}

// neighMAC is the MAC a guest resolved an address to, "" for none.
func (g *guest) neighMAC(addr string) string {
	out, err := tryIn(g.ns, 10*time.Second, "ip", "-j", "neigh", "show", "to", addr, "dev", "eth0")
	if err != nil {
		return ""
	}
	var ns []ipNeigh
	if json.Unmarshal([]byte(out), &ns) != nil || len(ns) == 0 {
		return ""
	}
	return strings.ToLower(ns[0].LLAddr)
}
