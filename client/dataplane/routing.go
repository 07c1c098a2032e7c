package dataplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// ipRule is the part of `ip -j rule show` the plane reads.
type ipRule struct {
	Priority int    `json:"priority"`
	Src      string `json:"src"`
	SrcLen   *int   `json:"srclen"`
	Dst      string `json:"dst"`
	DstLen   *int   `json:"dstlen"`
	IIF      string `json:"iif"`
	FWMark   string `json:"fwmark"`
	Table    string `json:"table"`
	Action   string `json:"action"`
	Suppress *int   `json:"suppress_prefixlen"`
}

// policy turns a read rule into the plane's form.
func (r ipRule) policy() policyRule {
	out := policyRule{Prio: r.Priority, Src: rulePrefix(r.Src, r.SrcLen), Dst: rulePrefix(r.Dst, r.DstLen), IIF: r.IIF,
		Action: r.Action, Suppress: r.Suppress != nil && *r.Suppress == 0}
	if r.FWMark != "" {
		if m, err := strconv.ParseUint(r.FWMark, 0, 32); err == nil {
			out.FWMark = uint32(m)
		}
	}
	if out.Action == "" {
		if t, err := strconv.ParseUint(r.Table, 10, 32); err == nil {
			out.Table = uint32(t)
		} else {
			out.Lookup = r.Table
		}
	}
	return out
}

// rulePrefix is a rule's selector as a masked prefix ("" for all).
func rulePrefix(addr string, bits *int) string {
	if addr == "" || addr == "all" {
		return ""
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	n := a.BitLen()
	if bits != nil {
		n = *bits
	}
	return netip.PrefixFrom(a, n).Masked().String()
}

// normalized masks a rule's prefixes as the kernel reports them.
func (r policyRule) normalized() policyRule {
	for _, s := range []*string{&r.Src, &r.Dst} {
		if pfx, err := netip.ParsePrefix(*s); err == nil {
			*s = pfx.Masked().String()
		}
	}
	return r
}

// ipTableRoute is the part of `ip -j route show table all` the plane
// reads.
type ipTableRoute struct {
	Dst     string `json:"dst"`
	Gateway string `json:"gateway"`
	Dev     string `json:"dev"`
	Table   string `json:"table"`
	Type    string `json:"type"`
}

// ensureRouting makes the plane's rules, tables and next-hop neighbour
// entries exactly what d needs (routing_plan.go): what is missing is
// added before what is stale goes, so traffic keeps a path.
func (p *Plane) ensureRouting(ctx context.Context, d *Desired) error {
	rt := p.planRouting(d)
	var errs []error
	if err := p.syncRoutes(ctx, rt.routes); err != nil {
		errs = append(errs, err)
	}
	if err := p.syncNextHops(ctx, d, rt.nextHops); err != nil {
		errs = append(errs, err)
	}
	if err := p.syncRules(ctx, rt.rules); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// syncRules adds the missing rules and removes the plane's others.
func (p *Plane) syncRules(ctx context.Context, want []policyRule) error {
	out, err := p.run.run(ctx, "ip", "-j", "-4", "rule", "show")
	if err != nil {
		return fmt.Errorf("dataplane: %w", err)
	}
	var read []ipRule
	if err := json.Unmarshal([]byte(out), &read); err != nil {
		return fmt.Errorf("dataplane: read ip rule output: %w", err)
	}
	have := map[string]policyRule{}
	for _, r := range read {
		if r.Priority >= rulePrioFirst && r.Priority <= rulePrioLast {
			pr := r.policy()
			have[pr.key()] = pr
		}
	}
	wanted := map[string]bool{}
	for _, r := range want {
		r = r.normalized()
		if wanted[r.key()] {
			continue
		}
		wanted[r.key()] = true
		if _, ok := have[r.key()]; ok {
			continue
		}
		if _, err := p.run.run(ctx, "ip", r.args()...); err != nil {
			return fmt.Errorf("dataplane: add routing rule: %w", err)
		}
	}
	for _, k := range sortedRuleKeys(have) {
		if wanted[k] {
			continue
		}
		args := have[k].args()
		args[2] = "del"
		if _, err := p.run.run(ctx, "ip", args...); err != nil {
			return fmt.Errorf("dataplane: remove routing rule: %w", err)
		}
	}
	return nil
}

func sortedRuleKeys(m map[string]policyRule) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// syncRoutes makes the plane's tables hold exactly want.
func (p *Plane) syncRoutes(ctx context.Context, want []tableRoute) error {
	out, err := p.run.run(ctx, "ip", "-j", "-4", "route", "show", "table", "all")
	if err != nil {
		return fmt.Errorf("dataplane: %w", err)
	}
	var read []ipTableRoute
	if err := json.Unmarshal([]byte(out), &read); err != nil {
		return fmt.Errorf("dataplane: read ip route output: %w", err)
	}
	have := map[string]tableRoute{}
	for _, r := range read {
		t, err := strconv.ParseUint(r.Table, 10, 32)
		if err != nil || uint32(t)&tableMask != tableBase || (r.Type != "" && r.Type != "unicast") {
			continue
		}
		dst := r.Dst
		if dst != "default" && !strings.Contains(dst, "/") {
			dst += "/32"
		}
		tr := tableRoute{Table: uint32(t), Dst: dst, Via: r.Gateway, Dev: r.Dev}
		have[tr.key()] = tr
	}
	wanted, replaced := map[string]bool{}, map[string]bool{}
	for _, r := range want {
		if pfx, err := netip.ParsePrefix(r.Dst); err == nil {
			r.Dst = pfx.Masked().String()
		}
		if wanted[r.key()] {
			continue
		}
		wanted[r.key()] = true
		replaced[fmt.Sprintf("%d|%s", r.Table, r.Dst)] = true
		if _, ok := have[r.key()]; ok {
			continue
		}
		if _, err := p.run.run(ctx, "ip", routeArgs("replace", r)...); err != nil {
			return fmt.Errorf("dataplane: route %s in table %d: %w", r.Dst, r.Table, err)
		}
	}
	for k, r := range have {
		// A route of a wanted destination was replaced, not added.
		if wanted[k] || replaced[fmt.Sprintf("%d|%s", r.Table, r.Dst)] {
			continue
		}
		if _, err := p.run.run(ctx, "ip", routeArgs("del", r)...); err != nil {
			return fmt.Errorf("dataplane: remove route %s from table %d: %w", r.Dst, r.Table, err)
		}
	}
	return nil
}

// routeArgs are the `ip route` arguments of a table route.
func routeArgs(verb string, r tableRoute) []string {
	a := []string{"-4", "route", verb, r.Dst}
	if r.Via != "" {
		a = append(a, "via", r.Via, "dev", r.Dev, "onlink")
	} else {
		a = append(a, "dev", r.Dev, "scope", "link")
	}
	return append(a, "table", strconv.FormatUint(uint64(r.Table), 10))
}

// syncNextHops makes the permanent neighbour entries in 169.254.0.0/16
// on the tenant bridges exactly the tables' next hops.
func (p *Plane) syncNextHops(ctx context.Context, d *Desired, want map[string]map[string]string) error {
	space := netip.MustParsePrefix(nextHopNetwork)
	var cmds []string
	for _, n := range d.Networks {
		if n.External {
			continue
		}
		br := BridgeName(n.ID)
		out, err := p.run.run(ctx, "ip", "-j", "-4", "neigh", "show", "dev", br, "nud", "permanent")
		if err != nil {
			// The bridge may not exist when its creation failed; Apply
			// reports that.
			continue
		}
		var ns []ipNeigh
		if strings.TrimSpace(out) != "" {
			if err := json.Unmarshal([]byte(out), &ns); err != nil {
				return fmt.Errorf("dataplane: read ip neigh output: %w", err)
			}
		}
		have := map[string]string{}
		for _, e := range ns {
			if a, err := netip.ParseAddr(e.Dst); err == nil && space.Contains(a) {
				have[e.Dst] = strings.ToLower(e.LLAddr)
			}
		}
		for ip := range have {
			if _, ok := want[br][ip]; !ok {
				cmds = append(cmds, fmt.Sprintf("neigh del %s dev %s", ip, br))
			}
		}
		for _, ip := range sortedKeys(want[br]) {
			if have[ip] != want[br][ip] {
				cmds = append(cmds, fmt.Sprintf("neigh replace %s lladdr %s dev %s nud permanent", ip, want[br][ip], br))
			}
		}
	}
	if len(cmds) == 0 {
		return nil
	}
	if _, err := p.run.runInput(ctx, []byte(strings.Join(cmds, "\n")+"\n"), "ip", "-batch", "-"); err != nil {
		return fmt.Errorf("dataplane: program next hops: %w", err)
	}
	return nil
}
