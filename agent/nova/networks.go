package nova

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// Networking in the Compute API: the networks a server boots with and
// its addresses (this file), os-interface (interfaces.go), and the
// proxies Nova kept to Neutron, gone from 2.36: os-floating-ips and
// os-floating-ip-pools with the server actions addFloatingIp (until
// 2.43) and removeFloatingIp (floating_ips.go), os-security-groups and
// their rules with addSecurityGroup and removeSecurityGroup
// (security_groups.go). The objects are the servers' (the Net endpoint),
// shared with the Networking API.

// proxyMax is the last microversion of Nova's network proxy APIs.
const proxyMax = 35

// netCaller is the request's caller for the servers' networking policy.
func (q *request) netCaller() structs.NetCaller {
	return structs.NetCaller{ProjectID: q.token.ProjectID, Admin: q.isAdmin()}
}

// networksOf reads a create's networks into the request, by Nova's
// rules: before 2.37 they may be absent (the one network available),
// from 2.37 they are "auto", "none" or a list of networks (uuid, with a
// fixed_ip) and ports.
func (q *request) networksOf(in map[string]any, groups []any, args *structs.InstanceCreateRequest) error {
	args.NetAdmin = q.isAdmin()
	for _, g := range groups {
		if name, ok := stringOf(g.(map[string]any), "name"); ok {
			args.SecurityGroups = append(args.SecurityGroups, name)
		}
	}
	switch v := in["networks"].(type) {
	case string:
		args.NetworksMode = structs.NetworksAuto
		if v == "none" {
			args.NetworksMode = structs.NetworksNone
		}
	case []any:
		if len(v) == 0 {
			return nil
		}
		args.NetworksMode = structs.NetworksList
		for _, raw := range v {
			nw, _ := raw.(map[string]any)
			r := &structs.InstanceNetworkRequest{}
			r.PortID, _ = stringOf(nw, "port")
			r.NetworkID, _ = stringOf(nw, "uuid")
			r.FixedIP, _ = stringOf(nw, "fixed_ip")
			r.Tag, _ = stringOf(nw, "tag")
			switch {
			case r.PortID != "":
				if r.FixedIP != "" {
					return badRequest("Specified Fixed IP '%s' cannot be used with port '%s': the two cannot be specified together.", r.FixedIP, r.PortID)
				}
				r.NetworkID = ""
			case !uuidPattern.MatchString(r.NetworkID):
				return badRequest("Bad networks format: network uuid is not in proper format (%s)", r.NetworkID)
			case r.FixedIP != "" && net.ParseIP(r.FixedIP) == nil:
				return badRequest("Invalid fixed IP address (%s)", r.FixedIP)
			}
			args.Networks = append(args.Networks, r)
		}
	}
	return nil
}

// netFault turns a networking error of the servers into Nova's answer.
func netFault(err error) error {
	switch structs.ErrorType(err) {
	case structs.ErrOverQuota:
		if strings.Contains(structs.Message(err), "'port'") {
			return faultf(http.StatusForbidden, "Maximum number of ports exceeded")
		}
		if strings.Contains(structs.Message(err), "'floatingip'") {
			return faultf(http.StatusForbidden, "Maximum number of floating IPs exceeded")
		}
		return faultf(http.StatusForbidden, "%s", structs.Message(err))
	}
	return err
}

// netInfo is an instance's networking, read once per request (a list
// reads every server's in one call).
func (q *request) netInfo(id string) *structs.InstanceNetInfo {
	if info, ok := q.nets[id]; ok {
		return info
	}
	q.prefetchNetInfo([]string{id})
	return q.nets[id]
}

// prefetchNetInfo reads the networking of instances in one call. A
// failure leaves their addresses empty rather than failing the read: a
// server's view does not depend on it.
func (q *request) prefetchNetInfo(ids []string) {
	if q.nets == nil {
		q.nets = map[string]*structs.InstanceNetInfo{}
	}
	var out structs.NetAddressesResponse
	err := q.call("Net.Addresses", &structs.NetAddressesRequest{InstanceIDs: ids}, &out)
	if err != nil {
		q.api.logger.Warn("read servers' addresses", "request_id", q.id, "error", err)
	}
	for _, id := range ids {
		q.nets[id] = out.Instances[id]
	}
}

func ipVersion(addr string) int {
	if a, err := netip.ParseAddr(addr); err == nil && a.Is6() {
		return 6
	}
	return 4
}

// addressesOf is a server's addresses as Nova shows them: by network
// name, each fixed IP then its floating IPs, with their type and MAC.
func (q *request) addressesOf(inst *structs.Instance) map[string]any {
	out := map[string]any{}
	info := q.netInfo(inst.ID)
	if info == nil {
		return out
	}
	for _, iface := range info.Interfaces {
		name := iface.NetworkName
		if name == "" {
			name = iface.NetworkID
		}
		list, _ := out[name].([]any)
		for _, ip := range iface.FixedIPs {
			list = append(list, map[string]any{"version": ipVersion(ip.IPAddress), "addr": ip.IPAddress,
				"OS-EXT-IPS:type": "fixed", "OS-EXT-IPS-MAC:mac_addr": iface.MACAddress})
		}
		for _, f := range iface.FloatingIPs {
			list = append(list, map[string]any{"version": ipVersion(f), "addr": f,
				"OS-EXT-IPS:type": "floating", "OS-EXT-IPS-MAC:mac_addr": iface.MACAddress})
		}
		if list == nil {
			list = []any{}
		}
		out[name] = list
	}
	return out
}

// securityGroupsOf is the server's groups as Nova shows them, nil when
// it has none.
func (q *request) securityGroupsOf(inst *structs.Instance) []any {
	info := q.netInfo(inst.ID)
	if info == nil || len(info.SecurityGroups) == 0 {
		return nil
	}
	out := make([]any, 0, len(info.SecurityGroups))
	for _, name := range info.SecurityGroups {
		out = append(out, map[string]any{"name": name})
	}
	return out
}

// ipsOf is GET /servers/{id}/ips's view: addr and version only.
func (q *request) ipsOf(inst *structs.Instance) map[string]any {
	out := map[string]any{}
	for name, list := range q.addressesOf(inst) {
		var ips []any
		for _, e := range list.([]any) {
			m := e.(map[string]any)
			ips = append(ips, map[string]any{"addr": m["addr"], "version": m["version"]})
		}
		if ips == nil {
			ips = []any{}
		}
		out[name] = ips
	}
	return out
}

// netObjects lists the caller's objects of a kind.
func (q *request) netObjects(kind string) (*structs.NetListResponse, error) {
	var out structs.NetListResponse
	err := q.call("Net.List", &structs.NetListRequest{Kind: kind, Caller: q.netCaller()}, &out)
	return &out, err
}
