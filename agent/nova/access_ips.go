package nova

import (
	"net/url"
	"regexp"

	"github.com/stratus-cloud/stratus/structs"
)

// Access IPs (accessIPv4, accessIPv6) are addresses a user records as a
// server's public ones. Nova stores and shows them and never checks
// them against the server's ports; so does Stratus. The schemas of
// create, update and rebuild check their format (Nova's 400 "'x' is
// not a 'ipv4'").

// accessIPsOf reads the access addresses of a create, update or
// rebuild body; an absent one is nil (left as it is).
func accessIPsOf(in map[string]any) (v4, v6 *string) {
	if s, ok := stringOf(in, "accessIPv4"); ok {
		v4 = &s
	}
	if s, ok := stringOf(in, "accessIPv6"); ok {
		v6 = &s
	}
	return v4, v6
}

// setAccessIPs puts access addresses into an update request, leaving
// out the ones that would not change inst.
func setAccessIPs(update *structs.InstanceUpdateRequest, inst *structs.Instance, in map[string]any) {
	v4, v6 := accessIPsOf(in)
	if v4 != nil && *v4 != inst.AccessIPv4 {
		update.AccessIPv4 = v4
	}
	if v6 != nil && *v6 != inst.AccessIPv6 {
		update.AccessIPv6 = v6
	}
}

// accessIPFilters adds the server list's access_ip_v4 and access_ip_v6
// filters (admins'): a regular expression searched in the address, as
// Nova's database filter.
func accessIPFilters(v url.Values, allowed func(string) bool, add func(func(serverEntry) bool)) {
	for k, field := range map[string]func(*structs.Instance) string{
		"access_ip_v4": func(i *structs.Instance) string { return i.AccessIPv4 },
		"access_ip_v6": func(i *structs.Instance) string { return i.AccessIPv6 },
	} {
		if !allowed(k) {
			continue
		}
		re, err := regexp.Compile(v.Get(k))
		if err != nil {
			re = regexp.MustCompile(regexp.QuoteMeta(v.Get(k)))
		}
		add(func(e serverEntry) bool { return re.MatchString(field(e.inst)) })
	}
}
