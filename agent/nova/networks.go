package nova

import (
	"net"
	"net/http"
	"net/netip"
	"sort"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// Networking in the Compute API: the networks a server boots with, its
// addresses, os-interface, and the proxies Nova kept to Neutron
// (os-floating-ips, os-floating-ip-pools, os-security-groups and their
// rules, gone from 2.36) and the server actions addFloatingIp (until
// 2.43), removeFloatingIp, addSecurityGroup and removeSecurityGroup. The
// objects are the servers' (the Net endpoint), shared with the
// Networking API.

const (
	interfaceRule = "os_compute_api:os-attach-interfaces"
	floatingRule  = "os_compute_api:os-floating-ips"
	poolRule      = "os_compute_api:os-floating-ip-pools"
	groupRule     = "os_compute_api:os-security-groups"
)

// proxyMax is the last microversion of Nova's network proxy APIs.
const proxyMax = 35

func (a *API) networkRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /servers/{id}/os-interface", Access: reader, Policy: interfaceRule + ":list", Handle: a.interfaceList},
		{Pattern: "POST /servers/{id}/os-interface", Access: member, Policy: interfaceRule + ":create", Handle: a.interfaceAttach},
		{Pattern: "GET /servers/{id}/os-interface/{port}", Access: reader, Policy: interfaceRule + ":show", Handle: a.interfaceShow},
		{Pattern: "DELETE /servers/{id}/os-interface/{port}", Access: member, Policy: interfaceRule + ":delete", Handle: a.interfaceDetach},

		{Pattern: "GET /os-floating-ips", MaxVersion: proxyMax, Access: reader, Policy: floatingRule + ":list", Handle: a.floatingList},
		{Pattern: "POST /os-floating-ips", MaxVersion: proxyMax, Access: member, Policy: floatingRule + ":create", Handle: a.floatingCreate},
		{Pattern: "GET /os-floating-ips/{fip}", MaxVersion: proxyMax, Access: reader, Policy: floatingRule + ":show", Handle: a.floatingShow},
		{Pattern: "DELETE /os-floating-ips/{fip}", MaxVersion: proxyMax, Access: member, Policy: floatingRule + ":delete", Handle: a.floatingDelete},
		{Pattern: "GET /os-floating-ip-pools", MaxVersion: proxyMax, Access: reader, Policy: poolRule + ":list", Handle: a.poolList},

		{Pattern: "GET /os-security-groups", MaxVersion: proxyMax, Access: reader, Policy: groupRule + ":get", Handle: a.groupList},
		{Pattern: "POST /os-security-groups", MaxVersion: proxyMax, Access: member, Policy: groupRule + ":create", Handle: a.groupCreate},
		{Pattern: "GET /os-security-groups/{sg}", MaxVersion: proxyMax, Access: reader, Policy: groupRule + ":show", Handle: a.groupShow},
		{Pattern: "PUT /os-security-groups/{sg}", MaxVersion: proxyMax, Access: member, Policy: groupRule + ":update", Handle: a.groupUpdate},
		{Pattern: "DELETE /os-security-groups/{sg}", MaxVersion: proxyMax, Access: member, Policy: groupRule + ":delete", Handle: a.groupDelete},
		{Pattern: "POST /os-security-group-rules", MaxVersion: proxyMax, Access: member, Policy: groupRule + ":rule:create", Handle: a.ruleCreate},
		{Pattern: "DELETE /os-security-group-rules/{rule}", MaxVersion: proxyMax, Access: member, Policy: groupRule + ":rule:delete", Handle: a.ruleDelete},
		{Pattern: "GET /servers/{id}/os-security-groups", MaxVersion: proxyMax, Access: reader, Policy: groupRule + ":list", Handle: a.serverGroupsList},
	}
}

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

// --- os-interface ---

func (q *request) interfaceView(iface *structs.InstanceInterface) map[string]any {
	v := map[string]any{"fixed_ips": fixedIPsOf(iface.FixedIPs), "mac_addr": iface.MACAddress, "net_id": iface.NetworkID,
		"port_id": iface.PortID, "port_state": iface.Status}
	if q.atLeast(70) {
		v["tag"] = nullString(iface.Tag)
	}
	return v
}

func fixedIPsOf(ips []structs.FixedIP) []any {
	out := make([]any, 0, len(ips))
	for _, ip := range ips {
		out = append(out, map[string]any{"ip_address": ip.IPAddress, "subnet_id": ip.SubnetID})
	}
	return out
}

func (a *API) interfaceList(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	out := []any{}
	if info := q.netInfo(inst.ID); info != nil {
		for _, iface := range info.Interfaces {
			out = append(out, q.interfaceView(iface))
		}
	}
	return okReply(map[string]any{"interfaceAttachments": out})
}

func (a *API) interfaceShow(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if info := q.netInfo(inst.ID); info != nil {
		for _, iface := range info.Interfaces {
			if iface.PortID == q.param("port") {
				return okReply(map[string]any{"interfaceAttachment": q.interfaceView(iface)})
			}
		}
	}
	return nil, notFound("Instance %s is not attached.", q.param("port"))
}

func interfaceSchema(mv int) *schema {
	props := map[string]*schema{
		"net_id":  {types: tString, format: checkUUID},
		"port_id": {types: tString, format: checkUUID},
		"fixed_ips": {types: tArray, maxItems: 1, items: &schema{types: tObject, required: []string{"ip_address"},
			props: map[string]*schema{"ip_address": {types: tString}}}},
	}
	if mv >= 49 {
		props["tag"] = &schema{types: tString, maxLen: 60, pattern: tagPattern}
	}
	return &schema{types: tObject, props: map[string]*schema{"interfaceAttachment": {types: tObject, props: props}}}
}

// checkAttachable refuses an interface change Nova would: a locked
// server for its project, a server not active, paused or stopped, or
// with a task under way.
func (q *request) checkAttachable(inst *structs.Instance, action string) error {
	if inst.Locked && !q.isAdmin() {
		return faultf(http.StatusConflict, "Instance %s is locked", inst.ID)
	}
	switch inst.VMState {
	case structs.VMStateActive, structs.VMStatePaused, structs.VMStateStopped:
	default:
		return faultf(http.StatusConflict, "Cannot '%s' instance %s while it is in vm_state %s", action, inst.ID, inst.VMState)
	}
	if inst.TaskState != "" {
		return faultf(http.StatusConflict, "Cannot '%s' instance %s while it is in task_state %s", action, inst.ID, inst.TaskState)
	}
	return nil
}

// interfaceAttach answers POST /servers/{id}/os-interface: a new port
// on a network (the one available when none is named) or the user's
// port, bound to the server; the host's dataplane plugs it.
func (a *API) interfaceAttach(q *request) (*reply, error) {
	body, err := decodeBody(q, interfaceSchema(q.mv))
	if err != nil {
		return nil, err
	}
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	in := object(body, "interfaceAttachment")
	args := &structs.InterfaceAttachRequest{InstanceID: inst.ID, Caller: q.netCaller()}
	args.NetworkID, _ = stringOf(in, "net_id")
	args.PortID, _ = stringOf(in, "port_id")
	args.Tag, _ = stringOf(in, "tag")
	if args.NetworkID != "" && args.PortID != "" {
		return nil, badRequest("Must not input both network_id and port_id")
	}
	if ips, _ := in["fixed_ips"].([]any); len(ips) > 0 {
		if args.NetworkID == "" {
			return nil, badRequest("Must input network_id when request IP address")
		}
		addr, _ := stringOf(ips[0].(map[string]any), "ip_address")
		if net.ParseIP(addr) == nil {
			return nil, badRequest("Invalid input for field/attribute fixed_ips. Value: %s. Invalid IP address", addr)
		}
		args.FixedIPs = []structs.FixedIP{{IPAddress: addr}}
	}
	if err := q.checkAttachable(inst, "attach_interface"); err != nil {
		return nil, err
	}
	var out structs.NetWriteResponse
	if err := q.call("Net.AttachInterface", args, &out); err != nil {
		switch structs.ErrorType(err) {
		case structs.ErrNetworkNotFound, structs.ErrPortNotFound:
			return nil, notFound("%s", structs.Message(err))
		case structs.ErrIPAddressAlreadyAllocated:
			return nil, faultf(http.StatusConflict, "%s", structs.Message(err))
		case structs.ErrIPAddressGenerationFailure, structs.ErrNetworkAmbiguous, structs.ErrInvalidIPForNetwork:
			return nil, badRequest("%s", structs.Message(err))
		}
		return nil, netFault(err)
	}
	if len(out.Ports) == 0 {
		return nil, faultf(http.StatusInternalServerError, msgUnexpected)
	}
	p := out.Ports[0]
	iface := &structs.InstanceInterface{PortID: p.ID, NetworkID: p.NetworkID, MACAddress: p.MACAddress, FixedIPs: p.FixedIPs,
		Tag: p.Tag, Status: structs.NetStatusDown}
	if b := out.Bindings[p.ID]; b != nil {
		iface.Status = b.Status
	}
	return okReply(map[string]any{"interfaceAttachment": q.interfaceView(iface)})
}

func (a *API) interfaceDetach(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if err := q.checkAttachable(inst, "detach_interface"); err != nil {
		return nil, err
	}
	err = q.call("Net.DetachInterface", &structs.InterfaceDetachRequest{InstanceID: inst.ID, PortID: q.param("port"), Caller: q.netCaller()},
		&structs.GenericResponse{})
	if structs.KindOf(err) == structs.KindNotFound {
		return nil, notFound("Port %s is not attached", q.param("port"))
	}
	if err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

// --- os-floating-ips and os-floating-ip-pools ---

// netObjects lists the caller's objects of a kind.
func (q *request) netObjects(kind string) (*structs.NetListResponse, error) {
	var out structs.NetListResponse
	err := q.call("Net.List", &structs.NetListRequest{Kind: kind, Caller: q.netCaller()}, &out)
	return &out, err
}

// externalNetworks are the networks floating IPs come from, by id.
func (q *request) externalNetworks() (map[string]*structs.Network, error) {
	nets, err := q.netObjects(structs.NetKindNetwork)
	if err != nil {
		return nil, err
	}
	out := map[string]*structs.Network{}
	for _, n := range nets.Networks {
		if n.External {
			out[n.ID] = n
		}
	}
	return out, nil
}

// floatingView is Nova's view of a floating IP: the instance it is NATed
// to, through the port's device.
func (q *request) floatingView(f *structs.FloatingIP, nets map[string]*structs.Network, devices map[string]string) map[string]any {
	pool := f.FloatingNetworkID
	if n := nets[f.FloatingNetworkID]; n != nil {
		pool = n.Name
	}
	var instance any
	if d := devices[f.PortID]; d != "" {
		instance = d
	}
	return map[string]any{"id": f.ID, "ip": f.FloatingIPAddress, "pool": pool, "fixed_ip": nullString(f.FixedIPAddress), "instance_id": instance}
}

// portDevices maps the caller's ports to their devices.
func (q *request) portDevices() (map[string]string, error) {
	ports, err := q.netObjects(structs.NetKindPort)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range ports.Ports {
		out[p.ID] = p.DeviceID
	}
	return out, nil
}

func (a *API) floatingList(q *request) (*reply, error) {
	fips, err := q.netObjects(structs.NetKindFloatingIP)
	if err != nil {
		return nil, err
	}
	nets, err := q.externalNetworks()
	if err != nil {
		return nil, err
	}
	devices, err := q.portDevices()
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, f := range fips.FloatingIPs {
		if f.ProjectID == q.token.ProjectID {
			out = append(out, q.floatingView(f, nets, devices))
		}
	}
	return okReply(map[string]any{"floating_ips": out})
}

func (q *request) getFloating(id string) (*structs.FloatingIP, error) {
	var out structs.NetListResponse
	err := q.call("Net.Get", &structs.NetGetRequest{Kind: structs.NetKindFloatingIP, ID: id, Caller: q.netCaller()}, &out)
	if err != nil || len(out.FloatingIPs) == 0 {
		return nil, notFound("Floating IP not found for ID %s", id)
	}
	return out.FloatingIPs[0], nil
}

func (a *API) floatingShow(q *request) (*reply, error) {
	f, err := q.getFloating(q.param("fip"))
	if err != nil {
		return nil, err
	}
	nets, err := q.externalNetworks()
	if err != nil {
		return nil, err
	}
	devices, err := q.portDevices()
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"floating_ip": q.floatingView(f, nets, devices)})
}

var floatingCreateSchema = &schema{types: tObject | tNull, open: true, props: map[string]*schema{"pool": {types: tString | tNull}}}

// floatingCreate answers POST /os-floating-ips: an address from the
// pool (an external network, by name or id; the default one when none
// is named).
func (a *API) floatingCreate(q *request) (*reply, error) {
	var body map[string]any
	if q.r.ContentLength != 0 {
		b, err := decodeBody(q, floatingCreateSchema)
		if err != nil {
			return nil, err
		}
		body = b
	}
	pool, _ := stringOf(body, "pool")
	nets, err := q.externalNetworks()
	if err != nil {
		return nil, err
	}
	var chosen *structs.Network
	for _, n := range nets {
		switch {
		case pool != "" && (n.Name == pool || n.ID == pool):
			chosen = n
		case pool == "" && (chosen == nil || n.IsDefault):
			chosen = n
		}
	}
	if chosen == nil {
		return nil, notFound("Floating IP pool not found.")
	}
	var out structs.NetWriteResponse
	err = q.call("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindFloatingIP, Caller: q.netCaller(),
		FloatingIP: &structs.FloatingIP{FloatingNetworkID: chosen.ID}}, &out)
	if structs.ErrorType(err) == structs.ErrIPAddressGenerationFailure {
		return nil, notFound("No more floating IPs in pool %s.", chosen.Name)
	}
	if err != nil {
		return nil, netFault(err)
	}
	return okReply(map[string]any{"floating_ip": q.floatingView(out.FloatingIPs[0], nets, nil)})
}

func (a *API) floatingDelete(q *request) (*reply, error) {
	f, err := q.getFloating(q.param("fip"))
	if err != nil {
		return nil, err
	}
	if err := q.call("Net.Delete", &structs.NetWriteRequest{Kind: structs.NetKindFloatingIP, ID: f.ID, Caller: q.netCaller()},
		&structs.NetWriteResponse{}); err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

func (a *API) poolList(q *request) (*reply, error) {
	nets, err := q.externalNetworks()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range nets {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	out := []any{}
	for _, n := range names {
		out = append(out, map[string]any{"name": n})
	}
	return okReply(map[string]any{"floating_ip_pools": out})
}

var addFloatingSchema = &schema{types: tObject, required: []string{"address"}, props: map[string]*schema{
	"address": {types: tString, format: checkIPAddress}, "fixed_address": {types: tString, format: checkIPAddress}}}

// findFloating finds the caller's floating IP of an address.
func (q *request) findFloating(addr string) (*structs.FloatingIP, error) {
	fips, err := q.netObjects(structs.NetKindFloatingIP)
	if err != nil {
		return nil, err
	}
	for _, f := range fips.FloatingIPs {
		if f.FloatingIPAddress == addr {
			return f, nil
		}
	}
	return nil, notFound("floating IP not found")
}

// actAddFloatingIP is addFloatingIp: NAT a floating IP to the server's
// fixed address (its first port's first IPv4 by default).
func actAddFloatingIP(q *request, inst *structs.Instance, arg any) (*reply, error) {
	in := arg.(map[string]any)
	addr, _ := stringOf(in, "address")
	fixed, _ := stringOf(in, "fixed_address")
	f, err := q.findFloating(addr)
	if err != nil {
		return nil, err
	}
	info := q.netInfo(inst.ID)
	if info == nil || len(info.Interfaces) == 0 {
		return nil, badRequest("No nw_info cache associated with instance")
	}
	var portID string
	for _, iface := range info.Interfaces {
		for _, ip := range iface.FixedIPs {
			if portID == "" && (fixed == ip.IPAddress || fixed == "" && ipVersion(ip.IPAddress) == 4) {
				portID, fixed = iface.PortID, ip.IPAddress
			}
		}
	}
	if portID == "" {
		return nil, badRequest("Specified fixed address not assigned to instance")
	}
	if f.PortID != "" {
		return nil, badRequest("floating IP is already associated")
	}
	err = q.call("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindFloatingIP, ID: f.ID, Caller: q.netCaller(),
		Fields: []string{"port_id", "fixed_ip_address"}, FloatingIP: &structs.FloatingIP{PortID: portID, FixedIPAddress: fixed}},
		&structs.NetWriteResponse{})
	if err != nil {
		if k := structs.KindOf(err); k == structs.KindNotFound || k == structs.KindInvalid || k == structs.KindConflict {
			return nil, badRequest("Unable to associate floating IP %s to fixed IP %s for instance %s. Error: %s", addr, fixed, inst.ID, structs.Message(err))
		}
		return nil, err
	}
	return acceptedReply(nil)
}

var removeFloatingSchema = &schema{types: tObject, required: []string{"address"}, props: map[string]*schema{
	"address": {types: tString, format: checkIPAddress}}}

// actRemoveFloatingIP is removeFloatingIp.
func actRemoveFloatingIP(q *request, inst *structs.Instance, arg any) (*reply, error) {
	addr, _ := stringOf(arg.(map[string]any), "address")
	f, err := q.findFloating(addr)
	if err != nil {
		return nil, err
	}
	attached := false
	if info := q.netInfo(inst.ID); info != nil && f.PortID != "" {
		for _, iface := range info.Interfaces {
			attached = attached || iface.PortID == f.PortID
		}
	}
	if !attached {
		return nil, faultf(http.StatusConflict, "Floating IP %s is not associated with instance %s.", addr, inst.ID)
	}
	if err := q.call("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindFloatingIP, ID: f.ID, Caller: q.netCaller(),
		Fields: []string{"port_id"}, FloatingIP: &structs.FloatingIP{}}, &structs.NetWriteResponse{}); err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

// --- os-security-groups and os-security-group-rules ---

// novaRuleView is a rule as Nova's proxy shows it.
func novaRuleView(r *structs.SecurityGroupRule, groups map[string]*structs.SecurityGroup) map[string]any {
	v := map[string]any{"id": r.ID, "parent_group_id": r.SecurityGroupID, "ip_protocol": nullString(r.Protocol),
		"from_port": intOrNil(r.PortRangeMin), "to_port": intOrNil(r.PortRangeMax), "group": map[string]any{}, "ip_range": map[string]any{}}
	if r.RemoteGroupID != "" {
		if g := groups[r.RemoteGroupID]; g != nil {
			v["group"] = map[string]any{"name": g.Name, "tenant_id": g.ProjectID}
		}
	} else if r.RemoteIPPrefix != "" {
		v["ip_range"] = map[string]any{"cidr": r.RemoteIPPrefix}
	} else {
		cidr := "0.0.0.0/0"
		if r.EtherType == structs.EtherTypeIPv6 {
			cidr = "::/0"
		}
		v["ip_range"] = map[string]any{"cidr": cidr}
	}
	return v
}

func intOrNil(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// novaGroupView is a group as Nova's proxy shows it: its ingress rules.
func novaGroupView(g *structs.SecurityGroup, rules []*structs.SecurityGroupRule, groups map[string]*structs.SecurityGroup) map[string]any {
	out := []any{}
	for _, r := range rules {
		if r.SecurityGroupID == g.ID && r.Direction == structs.DirectionIngress {
			out = append(out, novaRuleView(r, groups))
		}
	}
	return map[string]any{"id": g.ID, "name": g.Name, "description": g.Description, "tenant_id": g.ProjectID, "rules": out}
}

// groupsByID lists the caller's groups (with their rules), by id.
func (q *request) groupsByID() (*structs.NetListResponse, map[string]*structs.SecurityGroup, error) {
	out, err := q.netObjects(structs.NetKindSecurityGroup)
	if err != nil {
		return nil, nil, err
	}
	byID := map[string]*structs.SecurityGroup{}
	for _, g := range out.SecurityGroups {
		byID[g.ID] = g
	}
	return out, byID, nil
}

func (a *API) groupList(q *request) (*reply, error) {
	out, byID, err := q.groupsByID()
	if err != nil {
		return nil, err
	}
	list := []any{}
	for _, g := range out.SecurityGroups {
		if g.ProjectID == q.token.ProjectID {
			list = append(list, novaGroupView(g, out.SecurityGroupRules, byID))
		}
	}
	return okReply(map[string]any{"security_groups": list})
}

func (q *request) showGroup(id string, status int) (*reply, error) {
	out, byID, err := q.groupsByID()
	if err != nil {
		return nil, err
	}
	g := byID[id]
	if g == nil {
		return nil, notFound("Security group %s not found.", id)
	}
	return &reply{status: status, body: map[string]any{"security_group": novaGroupView(g, out.SecurityGroupRules, byID)}}, nil
}

func (a *API) groupShow(q *request) (*reply, error) { return q.showGroup(q.param("sg"), http.StatusOK) }

var groupSchema = &schema{types: tObject, required: []string{"security_group"}, props: map[string]*schema{
	"security_group": {types: tObject, required: []string{"name", "description"}, props: map[string]*schema{
		"name": {types: tString, maxLen: 255}, "description": {types: tString, maxLen: 255}}}}}

func (a *API) groupCreate(q *request) (*reply, error) {
	body, err := decodeBody(q, groupSchema)
	if err != nil {
		return nil, err
	}
	in := object(body, "security_group")
	g := &structs.SecurityGroup{Stateful: true}
	g.Name, _ = stringOf(in, "name")
	g.Description, _ = stringOf(in, "description")
	var out structs.NetWriteResponse
	if err := q.call("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroup, Caller: q.netCaller(), SecurityGroup: g}, &out); err != nil {
		if k := structs.KindOf(err); k == structs.KindConflict || k == structs.KindInvalid {
			return nil, badRequest("%s", structs.Message(err))
		}
		return nil, netFault(err)
	}
	return q.showGroup(out.SecurityGroups[0].ID, http.StatusOK)
}

func (a *API) groupUpdate(q *request) (*reply, error) {
	body, err := decodeBody(q, groupSchema)
	if err != nil {
		return nil, err
	}
	in := object(body, "security_group")
	g := &structs.SecurityGroup{}
	g.Name, _ = stringOf(in, "name")
	g.Description, _ = stringOf(in, "description")
	err = q.call("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroup, ID: q.param("sg"), Caller: q.netCaller(),
		Fields: []string{"name", "description"}, SecurityGroup: g}, &structs.NetWriteResponse{})
	if structs.KindOf(err) == structs.KindNotFound {
		return nil, notFound("Security group %s not found.", q.param("sg"))
	}
	if err != nil {
		return nil, badRequest("%s", structs.Message(err))
	}
	return q.showGroup(q.param("sg"), http.StatusOK)
}

func (a *API) groupDelete(q *request) (*reply, error) {
	err := q.call("Net.Delete", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroup, ID: q.param("sg"), Caller: q.netCaller()},
		&structs.NetWriteResponse{})
	switch {
	case structs.KindOf(err) == structs.KindNotFound:
		return nil, notFound("Security group %s not found.", q.param("sg"))
	case err != nil && structs.KindOf(err) == structs.KindConflict:
		return nil, badRequest("%s", structs.Message(err))
	case err != nil:
		return nil, err
	}
	return acceptedReply(nil)
}

var ruleSchema = &schema{types: tObject, required: []string{"security_group_rule"}, props: map[string]*schema{
	"security_group_rule": {types: tObject, required: []string{"parent_group_id"}, props: map[string]*schema{
		"parent_group_id": {types: tString}, "ip_protocol": {types: tString | tNull},
		"from_port": {types: tInteger | tString | tNull}, "to_port": {types: tInteger | tString | tNull},
		"cidr": {types: tString | tNull}, "group_id": {types: tString | tNull}}}}}

// ruleCreate answers POST /os-security-group-rules: an ingress rule, as
// Nova's proxy made one (ICMP's -1 is any).
func (a *API) ruleCreate(q *request) (*reply, error) {
	body, err := decodeBody(q, ruleSchema)
	if err != nil {
		return nil, err
	}
	in := object(body, "security_group_rule")
	r := &structs.SecurityGroupRule{Direction: structs.DirectionIngress}
	r.SecurityGroupID, _ = stringOf(in, "parent_group_id")
	r.Protocol, _ = stringOf(in, "ip_protocol")
	r.RemoteGroupID, _ = stringOf(in, "group_id")
	r.RemoteIPPrefix, _ = stringOf(in, "cidr")
	if r.RemoteIPPrefix == "" && r.RemoteGroupID == "" {
		r.RemoteIPPrefix = "0.0.0.0/0"
	}
	if strings.Contains(r.RemoteIPPrefix, ":") {
		r.EtherType = structs.EtherTypeIPv6
	}
	for k, dst := range map[string]**int{"from_port": &r.PortRangeMin, "to_port": &r.PortRangeMax} {
		if v, ok := in[k]; ok && v != nil {
			n := int(intOf(v))
			if n == -1 && strings.EqualFold(r.Protocol, "icmp") {
				continue
			}
			*dst = &n
		}
	}
	if (r.PortRangeMin == nil) != (r.PortRangeMax == nil) && !strings.EqualFold(r.Protocol, "icmp") {
		return nil, badRequest("Invalid port range %v:%v. Both from_port and to_port must be given.", in["from_port"], in["to_port"])
	}
	var out structs.NetWriteResponse
	if err := q.call("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroupRule, Caller: q.netCaller(), Rule: r}, &out); err != nil {
		switch structs.KindOf(err) {
		case structs.KindNotFound:
			return nil, notFound("Security group %s not found.", r.SecurityGroupID)
		case structs.KindInvalid, structs.KindConflict:
			return nil, badRequest("%s", structs.Message(err))
		}
		return nil, netFault(err)
	}
	_, byID, err := q.groupsByID()
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"security_group_rule": novaRuleView(out.SecurityGroupRules[0], byID)})
}

func (a *API) ruleDelete(q *request) (*reply, error) {
	err := q.call("Net.Delete", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroupRule, ID: q.param("rule"), Caller: q.netCaller()},
		&structs.NetWriteResponse{})
	if structs.KindOf(err) == structs.KindNotFound {
		return nil, notFound("Rule (%s) not found", q.param("rule"))
	}
	if err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

// serverGroupsList answers GET /servers/{id}/os-security-groups.
func (a *API) serverGroupsList(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	out, byID, err := q.groupsByID()
	if err != nil {
		return nil, err
	}
	list := []any{}
	seen := map[string]bool{}
	for _, id := range q.instanceGroupIDs(inst) {
		if g := byID[id]; g != nil && !seen[id] {
			seen[id] = true
			list = append(list, novaGroupView(g, out.SecurityGroupRules, byID))
		}
	}
	return okReply(map[string]any{"security_groups": list})
}

// instancePorts lists a server's ports.
func (q *request) instancePorts(inst *structs.Instance) ([]*structs.Port, error) {
	var out structs.NetListResponse
	err := q.call("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, DeviceIDs: []string{inst.ID},
		Caller: structs.NetCaller{ProjectID: inst.ProjectID, Admin: q.isAdmin()}}, &out)
	var ports []*structs.Port
	for _, p := range out.Ports {
		if p.IsCompute() {
			ports = append(ports, p)
		}
	}
	return ports, err
}

func (q *request) instanceGroupIDs(inst *structs.Instance) []string {
	ports, _ := q.instancePorts(inst)
	var out []string
	for _, p := range ports {
		out = append(out, p.SecurityGroups...)
	}
	return out
}

var groupActionSchema = &schema{types: tObject, required: []string{"name"}, props: map[string]*schema{
	"name": {types: tString, minLen: 1}}}

// actSecurityGroup is addSecurityGroup (add) or removeSecurityGroup:
// the group, by name or id, on every port of the server.
func actSecurityGroup(add bool) func(*request, *structs.Instance, any) (*reply, error) {
	return func(q *request, inst *structs.Instance, arg any) (*reply, error) {
		name, _ := stringOf(arg.(map[string]any), "name")
		_, byID, err := q.groupsByID()
		if err != nil {
			return nil, err
		}
		var group *structs.SecurityGroup
		for _, g := range byID {
			if (g.ID == name || g.Name == name) && g.ProjectID == inst.ProjectID {
				group = g
			}
		}
		if group == nil {
			return nil, notFound("Security group %s not found for project %s.", name, inst.ProjectID)
		}
		ports, err := q.instancePorts(inst)
		if err != nil {
			return nil, err
		}
		if len(ports) == 0 {
			return nil, badRequest("Network requires port_security_enabled and subnet associated in order to apply security groups.")
		}
		changed := false
		for _, p := range ports {
			has := containsString(p.SecurityGroups, group.ID)
			var groups []string
			switch {
			case add && !has:
				if !p.PortSecurityEnabled {
					return nil, badRequest("Network requires port_security_enabled and subnet associated in order to apply security groups.")
				}
				groups = append(append([]string(nil), p.SecurityGroups...), group.ID)
			case !add && has:
				for _, g := range p.SecurityGroups {
					if g != group.ID {
						groups = append(groups, g)
					}
				}
			default:
				continue
			}
			changed = true
			if err := q.call("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindPort, ID: p.ID, Fields: []string{"security_groups"},
				Caller: structs.NetCaller{ProjectID: inst.ProjectID, Admin: q.isAdmin()}, Port: &structs.Port{SecurityGroups: groups}},
				&structs.NetWriteResponse{}); err != nil {
				return nil, err
			}
		}
		if !changed {
			if add {
				return nil, badRequest("Security group %s is already associated with the instance %s", name, inst.ID)
			}
			return nil, badRequest("Security group %s not associated with the instance %s", name, inst.ID)
		}
		return acceptedReply(nil)
	}
}

// untilVersion limits an action to microversions up to last; later ones
// answer 404 as Nova's removed actions do.
func untilVersion(last int, do func(*request, *structs.Instance, any) (*reply, error)) func(*request, *structs.Instance, any) (*reply, error) {
	return func(q *request, inst *structs.Instance, arg any) (*reply, error) {
		if q.mv > last {
			return nil, notFound(msgNotFound)
		}
		return do(q, inst, arg)
	}
}
