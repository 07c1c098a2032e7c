package nova

import (
	"net/netip"
	"regexp"

	"github.com/stratus-cloud/stratus/structs"
)

// The server list's ip and ip6 filters are regular expressions matched
// (from the start, as Python's re.match) against a server's fixed
// addresses of that IP version, as Nova's in-memory _ip_filter does on
// the network info; a server matching either filter is listed.
// Floating addresses are not fixed_ips() of the network info, so they
// do not match.

// ipFilters adds the ip and ip6 filters the caller may use; a value
// that is not a regular expression is Nova's query schema 400.
func (q *request) ipFilters(allowed func(string) bool, add func(func(serverEntry) bool)) error {
	v := q.query()
	var res [2]*regexp.Regexp // IPv4, IPv6
	for i, k := range []string{"ip", "ip6"} {
		if !allowed(k) || v.Get(k) == "" {
			continue
		}
		re, err := regexp.Compile(`^(?:` + v.Get(k) + `)`)
		if err != nil {
			return badRequest("Invalid input for query parameters %s. Value: %s. %s is not a 'regex'", k, v.Get(k), pyRepr(v.Get(k)))
		}
		res[i] = re
	}
	if res[0] == nil && res[1] == nil {
		return nil
	}
	add(func(e serverEntry) bool { return q.fixedIPMatches(e.inst.ID, res[0], res[1]) })
	return nil
}

// fixedIPMatches reports whether one of the instance's fixed addresses
// matches the expression of its IP version (nil matches nothing).
func (q *request) fixedIPMatches(id string, v4, v6 *regexp.Regexp) bool {
	info := q.netInfo(id)
	if info == nil {
		return false
	}
	for _, iface := range info.Interfaces {
		for _, ip := range iface.FixedIPs {
			re := v4
			if a, err := netip.ParseAddr(ip.IPAddress); err == nil && a.Is6() && !a.Is4In6() {
				re = v6
			}
			if re != nil && re.MatchString(ip.IPAddress) {
				return true
			}
		}
	}
	return false
}

// instanceIDs are the instances' IDs, in order.
func instanceIDs(insts []*structs.Instance) []string {
	ids := make([]string, 0, len(insts))
	for _, inst := range insts {
		ids = append(ids, inst.ID)
	}
	return ids
}
