package structs

import (
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"
)

// Address arithmetic shared by the servers (validating requests) and the
// FSM (allocating addresses): pure functions of their arguments.

// ParseSubnetCIDR parses a subnet's CIDR of the given IP version (0 for
// either). Like Neutron it refuses a CIDR with host bits set, naming the
// one it recommends.
func ParseSubnetCIDR(cidr string, version int) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(cidr))
	if err != nil {
		return netip.Prefix{}, NetErrorf(KindInvalid, ErrInvalidInput, "Invalid input for operation: '%s' is not a valid IP subnet.", cidr)
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, NetErrorf(KindInvalid, ErrInvalidInput, "Invalid input for operation: '%s' is not a valid IP subnet.", cidr)
	}
	if m := p.Masked(); m != p {
		return netip.Prefix{}, NetErrorf(KindInvalid, ErrInvalidInput,
			"Invalid input for operation: '%s' isn't a recognized IP subnet cidr, '%s' is recommended.", cidr, m)
	}
	if version != 0 && IPVersion(p.Addr()) != version {
		return netip.Prefix{}, NetErrorf(KindInvalid, ErrInvalidInput,
			"Invalid input for operation: Cidr %s does not match ip_version %d.", cidr, version)
	}
	if (p.Addr().Is4() && p.Bits() > 30) || (p.Addr().Is6() && p.Bits() > 126) {
		return netip.Prefix{}, NetErrorf(KindInvalid, ErrInvalidInput,
			"Invalid input for operation: The prefix length of %s is too long to allocate any address.", cidr)
	}
	return p, nil
}

// IPVersion is 4 or 6.
func IPVersion(a netip.Addr) int {
	if a.Is4() {
		return 4
	}
	return 6
}

// ParseIP parses an address, refusing IPv4-mapped IPv6 forms and zones.
func ParseIP(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || a.Zone() != "" || a.Is4In6() {
		return netip.Addr{}, fmt.Errorf("'%s' is not a valid IP address", s)
	}
	return a, nil
}

// LastAddr is the last address of a prefix (IPv4's broadcast address).
func LastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	bits := p.Bits()
	for i := range b {
		for j := 0; j < 8; j++ {
			if i*8+j >= bits {
				b[i] |= 0x80 >> j
			}
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// DefaultGateway is a subnet's default gateway, its first host address.
func DefaultGateway(p netip.Prefix) netip.Addr { return p.Masked().Addr().Next() }

// UsableRange is the first and last address a port may hold in a
// subnet: all but the network address and, for IPv4, the broadcast
// address.
func UsableRange(p netip.Prefix) (netip.Addr, netip.Addr) {
	first, last := p.Masked().Addr().Next(), LastAddr(p)
	if p.Addr().Is4() {
		last = last.Prev()
	}
	return first, last
}

// DefaultPools are a subnet's allocation pools when none are given: its
// usable range without the gateway.
func DefaultPools(p netip.Prefix, gateway netip.Addr) []IPRange {
	first, last := UsableRange(p)
	if !gateway.IsValid() || !p.Contains(gateway) || gateway.Less(first) || last.Less(gateway) {
		return []IPRange{{Start: first.String(), End: last.String()}}
	}
	var out []IPRange
	if first.Less(gateway) {
		out = append(out, IPRange{Start: first.String(), End: gateway.Prev().String()})
	}
	if gateway.Less(last) {
		out = append(out, IPRange{Start: gateway.Next().String(), End: last.String()})
	}
	return out
}

// ValidatePools checks allocation pools against their subnet: each
// within the usable range, start not after end, no two overlapping, and
// none holding the gateway. It returns them sorted.
func ValidatePools(p netip.Prefix, pools []IPRange, gateway string) ([]IPRange, error) {
	type rng struct{ s, e netip.Addr }
	first, last := UsableRange(p)
	var rs []rng
	for _, pool := range pools {
		s, err1 := ParseIP(pool.Start)
		e, err2 := ParseIP(pool.End)
		if err1 != nil || err2 != nil {
			return nil, NetErrorf(KindInvalid, ErrInvalidInput, "Invalid input for operation: Invalid allocation pool %s-%s.", pool.Start, pool.End)
		}
		if e.Less(s) || !p.Contains(s) || !p.Contains(e) || s.Less(first) || last.Less(e) {
			return nil, NetErrorf(KindInvalid, ErrInvalidAllocationPool, "The allocation pool %s-%s spans beyond the subnet cidr %s.", s, e, p)
		}
		if gateway != "" {
			if g, err := ParseIP(gateway); err == nil && !g.Less(s) && !e.Less(g) {
				return nil, NetErrorf(KindConflict, ErrGatewayConflictWithAllocationPools,
					"Gateway ip %s conflicts with allocation pool %s-%s.", gateway, s, e)
			}
		}
		rs = append(rs, rng{s, e})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].s.Less(rs[j].s) })
	out := make([]IPRange, 0, len(rs))
	for i, r := range rs {
		if i > 0 && !rs[i-1].e.Less(r.s) {
			return nil, NetErrorf(KindInvalid, ErrOverlappingAllocationPools,
				"Found overlapping allocation pools: %s-%s and %s-%s for subnet %s.", rs[i-1].s, rs[i-1].e, r.s, r.e, p)
		}
		out = append(out, IPRange{Start: r.s.String(), End: r.e.String()})
	}
	return out, nil
}

// InPools reports whether a is in one of the pools.
func InPools(pools []IPRange, a netip.Addr) bool {
	for _, pool := range pools {
		s, err1 := ParseIP(pool.Start)
		e, err2 := ParseIP(pool.End)
		if err1 == nil && err2 == nil && !a.Less(s) && !e.Less(a) {
			return true
		}
	}
	return false
}

// LowestFree is the lowest address of the pools (in address order) that
// is not in used, which must be sorted. It is how the FSM allocates, so
// every server picks the same address for the same state.
func LowestFree(pools []IPRange, used []netip.Addr) (netip.Addr, bool) {
	sorted := append([]IPRange(nil), pools...)
	sort.Slice(sorted, func(i, j int) bool {
		a, _ := ParseIP(sorted[i].Start)
		b, _ := ParseIP(sorted[j].Start)
		return a.Less(b)
	})
	for _, pool := range sorted {
		cand, err1 := ParseIP(pool.Start)
		end, err2 := ParseIP(pool.End)
		if err1 != nil || err2 != nil {
			continue
		}
		i := sort.Search(len(used), func(i int) bool { return !used[i].Less(cand) })
		for ; i < len(used) && used[i] == cand; i++ {
			cand = cand.Next()
			if !cand.IsValid() {
				break
			}
		}
		if cand.IsValid() && !end.Less(cand) {
			return cand, true
		}
	}
	return netip.Addr{}, false
}

// EUI64 is the SLAAC address of mac in an IPv6 /64 (RFC 4291).
func EUI64(p netip.Prefix, mac string) (netip.Addr, error) {
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 {
		return netip.Addr{}, fmt.Errorf("invalid MAC %q", mac)
	}
	b := p.Masked().Addr().As16()
	b[8], b[9], b[10] = hw[0]^0x02, hw[1], hw[2]
	b[11], b[12] = 0xff, 0xfe
	b[13], b[14], b[15] = hw[3], hw[4], hw[5]
	return netip.AddrFrom16(b), nil
}

// ValidMAC reports whether s is a unicast Ethernet MAC in Neutron's
// colon form.
func ValidMAC(s string) bool {
	hw, err := net.ParseMAC(s)
	return err == nil && len(hw) == 6 && hw[0]&1 == 0 && strings.Count(s, ":") == 5 && hw.String() != "00:00:00:00:00:00"
}

// NormalizeMAC is a MAC in lower-case colon form.
func NormalizeMAC(s string) string {
	if hw, err := net.ParseMAC(s); err == nil {
		return hw.String()
	}
	return strings.ToLower(s)
}

// PrefixesOverlap reports whether two prefixes share an address.
func PrefixesOverlap(a, b netip.Prefix) bool { return a.Overlaps(b) }
