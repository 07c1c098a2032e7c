package nova

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

var netAdminCaller = structs.NetCaller{ProjectID: "p-admin", Admin: true}

func netMake(t *testing.T, s *server.Server, req *structs.NetWriteRequest) *structs.NetWriteResponse {
	t.Helper()
	var out structs.NetWriteResponse
	if err := s.RPC("Net.Create", req, &out); err != nil {
		t.Fatalf("create %s: %v", req.Kind, err)
	}
	return &out
}

// publicNetwork makes dev mode's external network on a test server.
func publicNetwork(t *testing.T, s *server.Server) *structs.Network {
	t.Helper()
	public := netMake(t, s, &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Caller: netAdminCaller,
		Network: &structs.Network{Name: "public", External: true, IsDefault: true, AdminStateUp: true, PortSecurityEnabled: true,
			NetworkType: structs.NetTypeFlat, PhysicalNetwork: "public"}}).Networks[0]
	netMake(t, s, &structs.NetWriteRequest{Kind: structs.NetKindSubnet, Caller: netAdminCaller,
		Subnet: &structs.Subnet{NetworkID: public.ID, CIDR: "172.24.4.0/24", IPVersion: 4}})
	return public
}

// makePrivate makes dev mode's shared network and its router to public.
func makePrivate(t *testing.T, s *server.Server, public *structs.Network) *structs.Network {
	t.Helper()
	private := netMake(t, s, &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Caller: netAdminCaller,
		Network: &structs.Network{Name: "private", Shared: true, AdminStateUp: true, PortSecurityEnabled: true}}).Networks[0]
	sub := netMake(t, s, &structs.NetWriteRequest{Kind: structs.NetKindSubnet, Caller: netAdminCaller,
		Subnet: &structs.Subnet{NetworkID: private.ID, CIDR: "10.0.0.0/24", IPVersion: 4, EnableDHCP: true}}).Subnets[0]
	r := netMake(t, s, &structs.NetWriteRequest{Kind: structs.NetKindRouter, Caller: netAdminCaller,
		Router: &structs.Router{Name: "router1", AdminStateUp: true, Gateway: &structs.RouterGateway{NetworkID: public.ID, EnableSNAT: true}}}).Routers[0]
	if err := s.RPC("Net.RouterInterface", &structs.RouterInterfaceRequest{RouterID: r.ID, SubnetID: sub.ID, Caller: netAdminCaller},
		&structs.RouterInterfaceResponse{}); err != nil {
		t.Fatal(err)
	}
	return private
}

func boot(h *harness, token, version string, extra map[string]any) *response {
	h.t.Helper()
	s := map[string]any{"name": "vm", "imageRef": "cirros", "flavorRef": "1"}
	for k, v := range extra {
		s[k] = v
	}
	return h.req("POST", "/compute/v2.1/servers", token, version, map[string]any{"server": s})
}

// addrs is a server's addresses on one network, as "type:addr".
func addrs(h *harness, token, id, network string) []string {
	h.t.Helper()
	r := h.req("GET", "/compute/v2.1/servers/"+id, token, "", nil).expect(h.t, 200)
	var out []string
	list, _ := r.obj("server", "addresses")[network].([]any)
	for _, a := range list {
		m := a.(map[string]any)
		if !strings.HasPrefix(m["OS-EXT-IPS-MAC:mac_addr"].(string), "fa:16:3e:") || m["version"] != float64(4) {
			h.t.Fatalf("address %v", m)
		}
		out = append(out, m["OS-EXT-IPS:type"].(string)+":"+m["addr"].(string))
	}
	return out
}

func devicePorts(t *testing.T, s *server.Server, id string) []*structs.Port {
	t.Helper()
	var out structs.NetListResponse
	if err := s.RPC("Net.List", &structs.NetListRequest{Kind: structs.NetKindPort, DeviceIDs: []string{id}, Caller: netAdminCaller}, &out); err != nil {
		t.Fatal(err)
	}
	return out.Ports
}

func TestServerNetworksAgainstARealServer(t *testing.T) {
	h, s := newRealHarness(t, "hv-1")
	public := publicNetwork(t, s)

	// No network available: "auto" makes the project's topology (a
	// network, a subnet and a router to the default external network)
	// once; before 2.37 a server boots without ports.
	r := boot(h, otherTok, "2.37", map[string]any{"networks": "auto"}).expect(t, 202)
	auto1 := r.obj("server")["id"].(string)
	r = boot(h, otherTok, "2.37", map[string]any{"networks": "auto"}).expect(t, 202)
	auto2 := r.obj("server")["id"].(string)
	if a, b := addrs(h, otherTok, auto1, "auto_allocated_network"), addrs(h, otherTok, auto2, "auto_allocated_network"); fmt.Sprint(a) != "[fixed:10.0.0.2]" ||
		fmt.Sprint(b) != "[fixed:10.0.0.3]" {
		t.Fatalf("auto-allocated addresses %v %v", a, b)
	}
	var nets structs.NetListResponse
	if err := s.RPC("Net.List", &structs.NetListRequest{Kind: structs.NetKindNetwork, ProjectID: "p-other", Caller: netAdminCaller}, &nets); err != nil || len(nets.Networks) != 1 {
		t.Fatalf("auto-allocated networks %d %v", len(nets.Networks), err)
	}
	r = boot(h, memberTok, "", nil).expect(t, 202)
	bare := r.obj("server")["id"].(string)
	if got := h.req("GET", "/compute/v2.1/servers/"+bare, memberTok, "", nil).obj("server", "addresses"); len(got) != 0 {
		t.Fatalf("a server without networks has addresses %v", got)
	}

	private := makePrivate(t, s, public)
	// Before 2.37 a server gets a port on the one network available.
	r = boot(h, memberTok, "", nil).expect(t, 202)
	vm := r.obj("server")["id"].(string)
	if got := addrs(h, memberTok, vm, "private"); fmt.Sprint(got) != "[fixed:10.0.0.2]" {
		t.Fatalf("addresses %v", got)
	}
	show := h.req("GET", "/compute/v2.1/servers/"+vm, memberTok, "", nil).obj("server")
	if fmt.Sprint(show["security_groups"]) != "[map[name:default]]" {
		t.Fatalf("security groups %v", show["security_groups"])
	}
	ips := h.req("GET", "/compute/v2.1/servers/"+vm+"/ips", memberTok, "", nil).expect(t, 200)
	if fmt.Sprint(ips.obj("addresses")["private"]) != "[map[addr:10.0.0.2 version:4]]" {
		t.Fatalf("ips %s", ips.raw)
	}
	h.req("GET", "/compute/v2.1/servers/"+vm+"/ips/private", memberTok, "", nil).expect(t, 200)
	h.req("GET", "/compute/v2.1/servers/"+vm+"/ips/public", memberTok, "", nil).fault(t, 404, "itemNotFound", "not a member")
	// The project with its own network and the shared one must choose.
	boot(h, otherTok, "2.37", map[string]any{"networks": "auto"}).fault(t, 409, "conflictingRequest", "Multiple possible networks found")
	// A network by uuid, at a fixed IP; "none".
	r = boot(h, memberTok, "2.37", map[string]any{"networks": []any{map[string]any{"uuid": private.ID, "fixed_ip": "10.0.0.50"}}}).expect(t, 202)
	fixed := r.obj("server")["id"].(string)
	if got := addrs(h, memberTok, fixed, "private"); fmt.Sprint(got) != "[fixed:10.0.0.50]" {
		t.Fatalf("fixed ip %v", got)
	}
	boot(h, memberTok, "2.37", map[string]any{"networks": []any{map[string]any{"uuid": private.ID, "fixed_ip": "10.0.0.50"}}}).
		fault(t, 409, "conflictingRequest", "10.0.0.50 already allocated")
	boot(h, memberTok, "2.37", map[string]any{"networks": []any{map[string]any{"uuid": private.ID, "fixed_ip": "10.0.0.51"}},
		"max_count": 2}).fault(t, 400, "badRequest", "max_count cannot be greater than 1 if an fixed_ip is specified")
	r = boot(h, memberTok, "2.37", map[string]any{"networks": "none"}).expect(t, 202)
	if got := h.req("GET", "/compute/v2.1/servers/"+r.obj("server")["id"].(string), memberTok, "", nil).obj("server", "addresses"); len(got) != 0 {
		t.Fatalf("networks none: %v", got)
	}
	// Networks the project cannot use.
	boot(h, memberTok, "2.37", map[string]any{"networks": []any{map[string]any{"uuid": nets.Networks[0].ID}}}).
		fault(t, 400, "badRequest", "Network "+nets.Networks[0].ID+" could not be found.")
	boot(h, memberTok, "2.37", map[string]any{"networks": []any{map[string]any{"uuid": public.ID}}}).
		fault(t, 403, "forbidden", "not allowed to create an interface on external network")
	// The user's own port: bound to the server, kept when it goes.
	port := netMake(t, s, &structs.NetWriteRequest{Kind: structs.NetKindPort, Caller: structs.NetCaller{ProjectID: "p-demo"},
		Port: &structs.Port{NetworkID: private.ID, Name: "mine", AdminStateUp: true}}).Ports[0]
	r = boot(h, memberTok, "2.37", map[string]any{"networks": []any{map[string]any{"port": port.ID}}}).expect(t, 202)
	withPort := r.obj("server")["id"].(string)
	boot(h, memberTok, "2.37", map[string]any{"networks": []any{map[string]any{"port": port.ID}}}).
		fault(t, 409, "conflictingRequest", "Port "+port.ID+" is still in use.")
	if got := addrs(h, memberTok, withPort, "private"); fmt.Sprint(got) != "[fixed:"+port.FixedIPs[0].IPAddress+"]" {
		t.Fatalf("server with the user's port %v", got)
	}

	// os-interface: attach a second port, list, show, detach.
	waitServer(h, vm, "ACTIVE")
	waitServer(h, withPort, "ACTIVE")
	r = h.req("POST", "/compute/v2.1/servers/"+vm+"/os-interface", memberTok, "2.70",
		map[string]any{"interfaceAttachment": map[string]any{"net_id": private.ID, "tag": "second"}}).expect(t, 200)
	att := r.obj("interfaceAttachment")
	if att["net_id"] != private.ID || att["tag"] != "second" || len(att["fixed_ips"].([]any)) != 1 {
		t.Fatalf("attached %s", r.raw)
	}
	list := h.req("GET", "/compute/v2.1/servers/"+vm+"/os-interface", memberTok, "", nil).expect(t, 200).list("interfaceAttachments")
	if len(list) != 2 || list[1].(map[string]any)["port_id"] != att["port_id"] || list[0].(map[string]any)["port_state"] != "ACTIVE" {
		t.Fatalf("interfaces %v", list)
	}
	h.req("GET", "/compute/v2.1/servers/"+vm+"/os-interface/"+att["port_id"].(string), memberTok, "", nil).expect(t, 200)
	h.req("POST", "/compute/v2.1/servers/"+vm+"/os-interface", memberTok, "",
		map[string]any{"interfaceAttachment": map[string]any{"port_id": port.ID}}).fault(t, 409, "conflictingRequest", "still in use")
	h.req("DELETE", "/compute/v2.1/servers/"+vm+"/os-interface/"+att["port_id"].(string), memberTok, "", nil).expect(t, 202)
	h.req("DELETE", "/compute/v2.1/servers/"+vm+"/os-interface/"+att["port_id"].(string), memberTok, "", nil).expect(t, 404)
	if got := devicePorts(t, s, vm); len(got) != 1 {
		t.Fatalf("ports after detach %d", len(got))
	}

	// Floating IPs through Nova's proxy and actions.
	r = h.req("POST", "/compute/v2.1/os-floating-ips", memberTok, "", map[string]any{"pool": "public"}).expect(t, 200)
	fip := r.obj("floating_ip")
	if fip["pool"] != "public" || fip["instance_id"] != nil || !strings.HasPrefix(fip["ip"].(string), "172.24.4.") {
		t.Fatalf("floating ip %s", r.raw)
	}
	h.req("POST", "/compute/v2.1/os-floating-ips", memberTok, "", map[string]any{"pool": "nope"}).fault(t, 404, "itemNotFound", "Floating IP pool not found.")
	h.req("GET", "/compute/v2.1/os-floating-ips", memberTok, "2.36", nil).expect(t, 404)
	h.req("GET", "/compute/v2.1/os-floating-ip-pools", memberTok, "", nil).expect(t, 200)
	act := func(id, token, version string, body map[string]any) *response {
		return h.req("POST", "/compute/v2.1/servers/"+id+"/action", token, version, body)
	}
	act(vm, memberTok, "", map[string]any{"addFloatingIp": map[string]any{"address": fip["ip"]}}).expect(t, 202)
	if got := addrs(h, memberTok, vm, "private"); fmt.Sprint(got) != "[fixed:10.0.0.2 floating:"+fip["ip"].(string)+"]" {
		t.Fatalf("addresses with a floating IP %v", got)
	}
	if l := h.req("GET", "/compute/v2.1/os-floating-ips", memberTok, "", nil).list("floating_ips"); l[0].(map[string]any)["instance_id"] != vm ||
		l[0].(map[string]any)["fixed_ip"] != "10.0.0.2" {
		t.Fatalf("floating ips %v", l)
	}
	act(vm, memberTok, "2.44", map[string]any{"addFloatingIp": map[string]any{"address": fip["ip"]}}).expect(t, 404)
	act(fixed, memberTok, "", map[string]any{"removeFloatingIp": map[string]any{"address": fip["ip"]}}).fault(t, 409, "conflictingRequest", "not associated")
	// Nova's checks come in its order: the server's addresses, then the
	// floating IP.
	act(bare, memberTok, "", map[string]any{"addFloatingIp": map[string]any{"address": "172.24.4.250"}}).
		fault(t, 400, "badRequest", "Instance network is not ready yet")
	act(fixed, memberTok, "", map[string]any{"addFloatingIp": map[string]any{"address": "172.24.4.250", "fixed_address": "10.0.0.2"}}).
		fault(t, 400, "badRequest", "Specified fixed address not assigned to instance")
	act(fixed, memberTok, "", map[string]any{"addFloatingIp": map[string]any{"address": "172.24.4.250"}}).
		fault(t, 404, "itemNotFound", "floating IP not found")
	// An associated floating IP moves to the server that asks for it.
	act(fixed, memberTok, "", map[string]any{"addFloatingIp": map[string]any{"address": fip["ip"], "fixed_address": "10.0.0.50"}}).expect(t, 202)
	if a, b := addrs(h, memberTok, fixed, "private"), addrs(h, memberTok, vm, "private"); fmt.Sprint(a) != "[fixed:10.0.0.50 floating:"+fip["ip"].(string)+"]" ||
		fmt.Sprint(b) != "[fixed:10.0.0.2]" {
		t.Fatalf("re-associated: %v, previous server %v", a, b)
	}
	act(vm, memberTok, "", map[string]any{"removeFloatingIp": map[string]any{"address": fip["ip"]}}).
		fault(t, 409, "conflictingRequest", "Floating IP "+fip["ip"].(string)+" is not associated with instance "+vm+".")
	// A fixed IP has one floating IP per external network.
	other := h.req("POST", "/compute/v2.1/os-floating-ips", memberTok, "", nil).expect(t, 200).obj("floating_ip")
	act(fixed, memberTok, "", map[string]any{"addFloatingIp": map[string]any{"address": other["ip"]}}).
		fault(t, 400, "badRequest", "as that fixed IP already has a floating IP on external network")
	act(fixed, memberTok, "", map[string]any{"removeFloatingIp": map[string]any{"address": fip["ip"]}}).expect(t, 202)
	act(fixed, memberTok, "", map[string]any{"removeFloatingIp": map[string]any{"address": fip["ip"]}}).fault(t, 409, "conflictingRequest", "not associated")
	act(fixed, memberTok, "2.44", map[string]any{"removeFloatingIp": map[string]any{"address": fip["ip"]}}).expect(t, 404)
	act(vm, memberTok, "", map[string]any{"addFloatingIp": map[string]any{"address": fip["ip"]}}).expect(t, 202)

	// Security groups through the proxy and the actions.
	r = h.req("POST", "/compute/v2.1/os-security-groups", memberTok, "", map[string]any{"security_group": map[string]any{"name": "web", "description": "w"}}).expect(t, 200)
	web := r.obj("security_group")
	r = h.req("POST", "/compute/v2.1/os-security-group-rules", memberTok, "", map[string]any{"security_group_rule": map[string]any{
		"parent_group_id": web["id"], "ip_protocol": "tcp", "from_port": 22, "to_port": 22, "cidr": "10.0.0.0/24"}}).expect(t, 200)
	if rule := r.obj("security_group_rule"); rule["from_port"] != float64(22) || fmt.Sprint(rule["ip_range"]) != "map[cidr:10.0.0.0/24]" {
		t.Fatalf("rule %s", r.raw)
	}
	act(vm, memberTok, "", map[string]any{"addSecurityGroup": map[string]any{"name": "web"}}).expect(t, 202)
	act(vm, memberTok, "", map[string]any{"addSecurityGroup": map[string]any{"name": "web"}}).fault(t, 400, "badRequest", "already associated")
	act(vm, memberTok, "", map[string]any{"addSecurityGroup": map[string]any{"name": "nope"}}).expect(t, 404)
	sgs := h.req("GET", "/compute/v2.1/servers/"+vm+"/os-security-groups", memberTok, "", nil).expect(t, 200).list("security_groups")
	if len(sgs) != 2 {
		t.Fatalf("server groups %v", sgs)
	}
	act(vm, memberTok, "", map[string]any{"removeSecurityGroup": map[string]any{"name": "web"}}).expect(t, 202)
	h.req("GET", "/compute/v2.1/os-security-groups", memberTok, "2.36", nil).expect(t, 404)

	// Deleting servers deletes the ports made for them, unbinds the
	// user's, and frees the floating IP.
	for _, id := range []string{vm, withPort} {
		h.req("DELETE", "/compute/v2.1/servers/"+id, memberTok, "", nil).expect(t, 204)
		h.req("POST", "/compute/v2.1/servers/"+id+"/action", memberTok, "", map[string]any{"forceDelete": nil}).expect(t, 202)
	}
	waitFor(t, "servers purged", func() error {
		for _, id := range []string{vm, withPort} {
			if r := h.req("GET", "/compute/v2.1/servers/"+id, adminTok, "", nil); r.status != 404 {
				return fmt.Errorf("%s still there", id)
			}
		}
		return nil
	})
	if got := devicePorts(t, s, vm); len(got) != 0 {
		t.Fatalf("the server's ports outlived it: %d", len(got))
	}
	var mine structs.NetListResponse
	if err := s.RPC("Net.Get", &structs.NetGetRequest{Kind: structs.NetKindPort, ID: port.ID, Caller: netAdminCaller}, &mine); err != nil ||
		mine.Ports[0].DeviceID != "" || len(mine.Ports[0].FixedIPs) != 1 {
		t.Fatalf("the user's port after its server: %+v %v", mine.Ports, err)
	}
	if l := h.req("GET", "/compute/v2.1/os-floating-ips", memberTok, "", nil).list("floating_ips"); l[0].(map[string]any)["instance_id"] != nil {
		t.Fatalf("floating ip still associated %v", l)
	}
}
