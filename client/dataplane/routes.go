package dataplane

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
)

// ipRoute is the part of `ip -j route show` the plane reads.
type ipRoute struct {
	Dst string `json:"dst"`
}

// validateOnLink checks the networks' on-link prefixes.
func (d *Desired) validateOnLink() error {
	for _, n := range d.Networks {
		for _, r := range n.OnLink {
			if _, err := netip.ParsePrefix(r); err != nil {
				return fmt.Errorf("network %s: bad on-link prefix %q", n.ID, r)
			}
		}
	}
	return nil
}

// ensureOnLink makes the static routes out of a network's bridge
// exactly its on-link prefixes (the bridge is the plane's, so every
// static route on it is too).
func (p *Plane) ensureOnLink(ctx context.Context, n *Network) error {
	br := BridgeName(n.ID)
	out, err := p.run.run(ctx, "ip", "-j", "-4", "route", "show", "dev", br, "proto", "static")
	if err != nil {
		return fmt.Errorf("dataplane: %w", err)
	}
	var routes []ipRoute
	if strings.TrimSpace(out) != "" {
		if err := json.Unmarshal([]byte(out), &routes); err != nil {
			return fmt.Errorf("dataplane: read ip route output: %w", err)
		}
	}
	want := map[string]bool{}
	for _, r := range n.OnLink {
		pfx, _ := netip.ParsePrefix(r)
		want[pfx.Masked().String()] = true
	}
	have := map[string]bool{}
	for _, r := range routes {
		have[r.Dst] = true
		if !want[r.Dst] {
			if _, err := p.run.run(ctx, "ip", "route", "del", r.Dst, "dev", br, "proto", "static"); err != nil {
				return fmt.Errorf("dataplane: remove route %s from %s: %w", r.Dst, br, err)
			}
		}
	}
	for r := range want {
		if !have[r] {
			if _, err := p.run.run(ctx, "ip", "route", "replace", r, "dev", br, "proto", "static", "scope", "link"); err != nil {
				return fmt.Errorf("dataplane: route %s out of %s: %w", r, br, err)
			}
		}
	}
	return nil
}
