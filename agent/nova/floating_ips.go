package nova

import (
	"net/http"
	"sort"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// Nova's floating IP proxies to the Networking API, gone from 2.36:
// os-floating-ips and os-floating-ip-pools, and the server actions
// addFloatingIp (until 2.43) and removeFloatingIp.

const (
	floatingRule = "os_compute_api:os-floating-ips"
	poolRule     = "os_compute_api:os-floating-ip-pools"
)

func (a *API) floatingIPRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /os-floating-ips", MaxVersion: proxyMax, Access: reader, Policy: floatingRule + ":list", Handle: a.floatingList},
		{Pattern: "POST /os-floating-ips", MaxVersion: proxyMax, Access: member, Policy: floatingRule + ":create", Handle: a.floatingCreate},
		{Pattern: "GET /os-floating-ips/{fip}", MaxVersion: proxyMax, Access: reader, Policy: floatingRule + ":show", Handle: a.floatingShow},
		{Pattern: "DELETE /os-floating-ips/{fip}", MaxVersion: proxyMax, Access: member, Policy: floatingRule + ":delete", Handle: a.floatingDelete},
		{Pattern: "GET /os-floating-ip-pools", MaxVersion: proxyMax, Access: reader, Policy: poolRule + ":list", Handle: a.poolList},
	}
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
// fixed address (its first IPv4 one by default), with Nova's checks in
// Nova's order — the server's ports and addresses first, then the
// floating IP. A floating IP associated with another server moves to
// this one, as Neutron lets Nova re-associate it; Neutron's refusals
// (that fixed IP already has a floating IP on the network) are 400.
func actAddFloatingIP(q *request, inst *structs.Instance, arg any) (*reply, error) {
	in := arg.(map[string]any)
	addr, _ := stringOf(in, "address")
	fixed, hasFixed := stringOf(in, "fixed_address")
	info := q.netInfo(inst.ID)
	if info == nil || len(info.Interfaces) == 0 {
		return nil, badRequest("Instance network is not ready yet")
	}
	portOf := map[string]string{}
	var firstV4 string
	for _, iface := range info.Interfaces {
		for _, ip := range iface.FixedIPs {
			if _, seen := portOf[ip.IPAddress]; !seen {
				portOf[ip.IPAddress] = iface.PortID
			}
			if firstV4 == "" && ipVersion(ip.IPAddress) == 4 {
				firstV4 = ip.IPAddress
			}
		}
	}
	switch {
	case len(portOf) == 0:
		return nil, badRequest("No fixed IPs associated to instance")
	case hasFixed && portOf[fixed] == "":
		return nil, badRequest("Specified fixed address not assigned to instance")
	case !hasFixed && firstV4 == "":
		return nil, badRequest("Unable to associate floating IP %s to any fixed IPs for instance %s. "+
			"Instance has no fixed IPv4 addresses to associate.", addr, inst.ID)
	case !hasFixed:
		fixed = firstV4
	}
	f, err := q.findFloating(addr)
	if err != nil {
		return nil, err
	}
	err = q.call("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindFloatingIP, ID: f.ID, Caller: q.netCaller(),
		Fields: []string{"port_id", "fixed_ip_address"}, FloatingIP: &structs.FloatingIP{PortID: portOf[fixed], FixedIPAddress: fixed}},
		&structs.NetWriteResponse{})
	switch k := structs.KindOf(err); {
	case err == nil:
		return acceptedReply(nil)
	case k == structs.KindConflict:
		return nil, badRequest("%s", structs.Message(err))
	case k == structs.KindPermission:
		return nil, faultf(http.StatusForbidden, "%s", structs.Message(err))
	case k == structs.KindNotFound || k == structs.KindInvalid:
		return nil, badRequest("Unable to associate floating IP %s to fixed IP %s for instance %s. Error: %s", addr, fixed, inst.ID, structs.Message(err))
	}
	return nil, err
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
