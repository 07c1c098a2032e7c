package dataplane

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Lease is a DHCP lease dnsmasq handed to one of the ports.
type Lease struct {
	PortID    string
	NetworkID string
	MAC       string
	IP        string
	Hostname  string
	// Expires is the lease's end in Unix seconds (0: never).
	Expires int64
}

// leaseLine is one line of a dnsmasq lease file: IPv4 lines are
// "expiry mac ip hostname clientid"; IPv6 lines (after the "duid" line)
// are "expiry iaid ip hostname clientid".
type leaseLine struct {
	expires  int64
	mac      string
	ip       netip.Addr
	hostname string
}

// parseLeases reads a dnsmasq lease file.
func parseLeases(data []byte) []leaseLine {
	var out []leaseLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || f[0] == "duid" {
			continue
		}
		exp, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		ip, err := netip.ParseAddr(f[2])
		if err != nil {
			continue
		}
		l := leaseLine{expires: exp, ip: ip}
		if validMAC(f[1]) {
			l.mac = strings.ToLower(f[1])
		}
		if f[3] != "*" {
			l.hostname = f[3]
		}
		out = append(out, l)
	}
	return out
}

// Leases reads the lease files of the networks the plane serves and
// returns the leases that belong to the desired ports (matched by
// address and, for IPv4, MAC), by port id.
func (p *Plane) Leases() ([]Lease, error) {
	p.mu.Lock()
	d := p.last
	p.mu.Unlock()
	if d == nil {
		return nil, nil
	}
	type key struct{ network, ip string }
	owners := map[key]*Port{}
	for i := range d.Ports {
		for _, ip := range d.Ports[i].IPs {
			if a, err := netip.ParseAddr(ip); err == nil {
				owners[key{d.Ports[i].NetworkID, a.String()}] = &d.Ports[i]
			}
		}
	}
	var out []Lease
	for _, n := range d.Networks {
		data, err := os.ReadFile(filepath.Join(p.dhcpDir(n.ID), "leases"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read leases of network %s: %w", n.ID, err)
		}
		for _, l := range parseLeases(data) {
			port := owners[key{n.ID, l.ip.String()}]
			if port == nil || (l.mac != "" && l.mac != strings.ToLower(port.MAC)) {
				continue
			}
			out = append(out, Lease{PortID: port.ID, NetworkID: n.ID, MAC: strings.ToLower(port.MAC),
				IP: l.ip.String(), Hostname: l.hostname, Expires: l.expires})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].PortID != out[j].PortID {
			return out[i].PortID < out[j].PortID
		}
		return out[i].IP < out[j].IP
	})
	return out, nil
}
