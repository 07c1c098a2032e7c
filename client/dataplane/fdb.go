package dataplane

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strings"
)

// zeroMAC is the forwarding entry of broadcast, unknown unicast and
// multicast (BUM) traffic: one per remote endpoint, head-end
// replication to exactly the hosts with ports on the network.
const zeroMAC = "00:00:00:00:00:00"

// fdbEntry is a VXLAN forwarding entry: frames to MAC go to Dst.
type fdbEntry struct {
	MAC string `json:"mac"`
	Dst string `json:"dst"`
}

// wantFDB is the forwarding table of a network's VXLAN device: a BUM
// entry per remote endpoint, and each remote port's MAC to its host's
// endpoint (l2population; nothing is learned or flooded elsewhere).
func wantFDB(remote []RemotePort) map[fdbEntry]bool {
	out := map[fdbEntry]bool{}
	for _, r := range remote {
		out[fdbEntry{MAC: zeroMAC, Dst: r.TunnelIP}] = true
		out[fdbEntry{MAC: strings.ToLower(r.MAC), Dst: r.TunnelIP}] = true
	}
	return out
}

// readFDB lists the remote entries of a VXLAN device (those with a
// destination: the device is the plane's, so they are too).
func (p *Plane) readFDB(ctx context.Context, dev string) (map[fdbEntry]bool, error) {
	out, err := p.run.run(ctx, "bridge", "-j", "fdb", "show", "dev", dev)
	if err != nil {
		return nil, err
	}
	var entries []fdbEntry
	if strings.TrimSpace(out) != "" {
		if err := json.Unmarshal([]byte(out), &entries); err != nil {
			return nil, fmt.Errorf("read bridge fdb output: %w", err)
		}
	}
	have := map[fdbEntry]bool{}
	for _, e := range entries {
		if e.Dst != "" {
			have[fdbEntry{MAC: strings.ToLower(e.MAC), Dst: e.Dst}] = true
		}
	}
	return have, nil
}

// programFDB makes a VXLAN device's remote entries exactly what the
// remote ports need, in one batch: stale ones deleted, missing ones
// added (BUM entries appended, one per endpoint; a MAC's entry
// replaced, so a port that moved follows its host).
func (p *Plane) programFDB(ctx context.Context, dev string, remote []RemotePort) error {
	have, err := p.readFDB(ctx, dev)
	if err != nil {
		return fmt.Errorf("dataplane: %w", err)
	}
	want := wantFDB(remote)
	var cmds []string
	for _, e := range sortedFDB(have) {
		if !want[e] {
			cmds = append(cmds, fmt.Sprintf("fdb del %s dev %s dst %s", e.MAC, dev, e.Dst))
		}
	}
	for _, e := range sortedFDB(want) {
		if have[e] {
			continue
		}
		verb := "replace"
		if e.MAC == zeroMAC {
			verb = "append"
		}
		cmds = append(cmds, fmt.Sprintf("fdb %s %s dev %s dst %s", verb, e.MAC, dev, e.Dst))
	}
	if len(cmds) == 0 {
		return nil
	}
	if _, err := p.run.runInput(ctx, []byte(strings.Join(cmds, "\n")+"\n"), "bridge", "-batch", "-"); err != nil {
		return fmt.Errorf("dataplane: program forwarding entries of %s: %w", dev, err)
	}
	return nil
}

// sortedFDB orders entries for stable batches (BUM entries first).
func sortedFDB(m map[fdbEntry]bool) []fdbEntry {
	out := make([]fdbEntry, 0, len(m))
	for e := range m {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].MAC != out[j].MAC {
			return out[i].MAC < out[j].MAC
		}
		return out[i].Dst < out[j].Dst
	})
	return out
}

// ipNeigh is the part of `ip -j neigh show` the overlay reads.
type ipNeigh struct {
	Dst    string `json:"dst"`
	LLAddr string `json:"lladdr"`
}

// programNeighbours makes a VXLAN device's neighbour entries each
// remote port's addresses → MAC. The device answers ARP requests and
// neighbour solicitations from them (proxy) and drops those it has no
// entry for, so address resolution never crosses the overlay: a local
// port's, or a subnet gateway every host's bridge holds, stays on the
// host.
func (p *Plane) programNeighbours(ctx context.Context, dev string, remote []RemotePort) error {
	out, err := p.run.run(ctx, "ip", "-j", "neigh", "show", "dev", dev)
	if err != nil {
		return fmt.Errorf("dataplane: %w", err)
	}
	var ns []ipNeigh
	if strings.TrimSpace(out) != "" {
		if err := json.Unmarshal([]byte(out), &ns); err != nil {
			return fmt.Errorf("dataplane: read ip neigh output: %w", err)
		}
	}
	have := map[string]string{}
	for _, n := range ns {
		have[n.Dst] = strings.ToLower(n.LLAddr)
	}
	want := map[string]string{}
	for _, r := range remote {
		for _, ip := range r.IPs {
			if a, err := netip.ParseAddr(ip); err == nil {
				want[a.String()] = strings.ToLower(r.MAC)
			}
		}
	}
	var cmds []string
	for _, ip := range sortedKeys(have) {
		if _, ok := want[ip]; !ok {
			cmds = append(cmds, fmt.Sprintf("neigh del %s dev %s", ip, dev))
		}
	}
	for _, ip := range sortedKeys(want) {
		if have[ip] != want[ip] {
			cmds = append(cmds, fmt.Sprintf("neigh replace %s lladdr %s dev %s nud permanent", ip, want[ip], dev))
		}
	}
	if len(cmds) == 0 {
		return nil
	}
	if _, err := p.run.runInput(ctx, []byte(strings.Join(cmds, "\n")+"\n"), "ip", "-batch", "-"); err != nil {
		return fmt.Errorf("dataplane: program neighbour entries of %s: %w", dev, err)
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
