package neutron

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// fuzzRPC answers the network endpoints without state: a create or an
// update echoes the object the API decoded (with an id), a read finds a
// fixed object of the kind, a list is empty.
type fuzzRPC struct{}

const fuzzObjID = "3e2d1c0b-a987-4654-b321-0fedcba98765"

func fuzzObjects(req *structs.NetWriteRequest) structs.NetObjects {
	var o structs.NetObjects
	id := req.ID
	if id == "" {
		id = fuzzObjID
	}
	switch {
	case req.Network != nil:
		n := *req.Network
		n.ID = id
		o.Networks = []*structs.Network{&n}
	case req.Subnet != nil:
		s := *req.Subnet
		s.ID = id
		o.Subnets = []*structs.Subnet{&s}
	case req.Port != nil:
		p := *req.Port
		p.ID = id
		o.Ports = []*structs.Port{&p}
	case req.SecurityGroup != nil:
		g := *req.SecurityGroup
		g.ID = id
		o.SecurityGroups = []*structs.SecurityGroup{&g}
	case req.Rule != nil:
		r := *req.Rule
		r.ID = id
		o.SecurityGroupRules = []*structs.SecurityGroupRule{&r}
	case req.FloatingIP != nil:
		f := *req.FloatingIP
		f.ID = id
		o.FloatingIPs = []*structs.FloatingIP{&f}
	case req.Router != nil:
		r := *req.Router
		r.ID = id
		o.Routers = []*structs.Router{&r}
	}
	return o
}

func (fuzzRPC) RPC(method string, args, reply any) error {
	switch method {
	case "Net.Create", "Net.Update":
		req := args.(*structs.NetWriteRequest)
		reply.(*structs.NetWriteResponse).NetObjects = fuzzObjects(req)
		if len(reply.(*structs.NetWriteResponse).Networks)+len(reply.(*structs.NetWriteResponse).Subnets)+
			len(reply.(*structs.NetWriteResponse).Ports)+len(reply.(*structs.NetWriteResponse).SecurityGroups)+
			len(reply.(*structs.NetWriteResponse).SecurityGroupRules)+len(reply.(*structs.NetWriteResponse).FloatingIPs)+
			len(reply.(*structs.NetWriteResponse).Routers) == 0 {
			return structs.Errorf(structs.KindInvalid, "no %s in the request", req.Kind)
		}
	case "Net.Get":
		req := args.(*structs.NetGetRequest)
		w := &structs.NetWriteRequest{Kind: req.Kind, ID: req.ID}
		for _, res := range resources {
			if res.kind == req.Kind {
				res.init(w)
			}
		}
		reply.(*structs.NetListResponse).NetObjects = fuzzObjects(w)
	case "Net.List", "Net.Delete":
	case "Net.RouterInterface":
		r := args.(*structs.RouterInterfaceRequest)
		*reply.(*structs.RouterInterfaceResponse) = structs.RouterInterfaceResponse{RouterID: r.RouterID,
			ProjectID: "p-alice", NetworkID: fuzzObjID, PortID: fuzzObjID, SubnetID: fuzzObjID, SubnetIDs: []string{fuzzObjID}}
	case "Net.Quotas":
		*reply.(*structs.NetQuotaResponse) = structs.NetQuotaResponse{Limits: map[string]int64{"network": 10, "port": 50}}
	case "Net.UpdateQuotas":
	default:
		return fmt.Errorf("fuzz rpc: unknown method %s", method)
	}
	return nil
}

// neutronTarget is one request the fuzzer sends a body (or, for a GET,
// a query string) to.
type neutronTarget struct{ method, path, token string }

// neutronTargets lists the targets; resources is filled by an init.
func neutronTargets() []neutronTarget {
	var out []neutronTarget
	for _, res := range resources {
		out = append(out,
			neutronTarget{"POST", "/v2.0/" + res.path, aliceTok},
			neutronTarget{"PUT", "/v2.0/" + res.path + "/" + fuzzObjID, aliceTok},
			neutronTarget{"POST", "/v2.0/" + res.path, adminTok},
			neutronTarget{"GET", "/v2.0/" + res.path, aliceTok})
	}
	return append(out,
		neutronTarget{"PUT", "/v2.0/routers/" + fuzzObjID + "/add_router_interface", aliceTok},
		neutronTarget{"PUT", "/v2.0/routers/" + fuzzObjID + "/remove_router_interface", aliceTok},
		neutronTarget{"PUT", "/v2.0/quotas/p-alice", adminTok})
}

// targetOf finds a target's index.
func targetOf(targets []neutronTarget, method, path, token string) uint8 {
	for i, t := range targets {
		if t.method == method && t.path == path && t.token == token {
			return uint8(i)
		}
	}
	panic("no fuzz target " + method + " " + path) // a mistake in the seeds
}

// FuzzRequest sends arbitrary bodies to the Networking API's decoders
// and validators (create and update of every resource, bulk creates,
// router interfaces, quotas) and arbitrary query strings to its lists,
// through the real handler over a stateless fake RPC. The answer is
// never a panic nor a 5xx, and every 4xx is a NeutronError body (or
// Keystone's error for a 401). Run longer with
// go test -run '^$' -fuzz FuzzRequest -fuzztime 5m ./agent/neutron.
func FuzzRequest(f *testing.F) {
	id := fuzzObjID
	seeds := []struct{ method, path, token, body string }{
		{"POST", "/v2.0/networks", aliceTok, `{"network": {"name": "net", "admin_state_up": true, "mtu": 1450, "port_security_enabled": false}}`},
		{"POST", "/v2.0/networks", adminTok, `{"networks": [{"network": {"name": "a", "shared": true, "router:external": true, "provider:network_type": "flat", "provider:physical_network": "physnet1"}}, {"name": "b", "provider:segmentation_id": 101}]}`},
		{"POST", "/v2.0/subnets", aliceTok, `{"subnet": {"network_id": "` + id + `", "ip_version": 4, "cidr": "10.0.0.0/24", "gateway_ip": null, "allocation_pools": [{"start": "10.0.0.10", "end": "10.0.0.20"}], "dns_nameservers": ["8.8.8.8"], "host_routes": [{"destination": "0.0.0.0/0", "nexthop": "10.0.0.1"}], "enable_dhcp": true}}`},
		{"POST", "/v2.0/subnets", aliceTok, `{"subnet": {"network_id": "` + id + `", "ip_version": 6, "cidr": "fd00::/64", "ipv6_ra_mode": "slaac", "ipv6_address_mode": "slaac"}}`},
		{"POST", "/v2.0/ports", aliceTok, `{"port": {"network_id": "` + id + `", "name": "p", "fixed_ips": [{"subnet_id": "` + id + `", "ip_address": "10.0.0.5"}], "security_groups": ["` + id + `"], "allowed_address_pairs": [{"ip_address": "10.0.0.0/24", "mac_address": "fa:16:3e:00:00:01"}], "binding:vnic_type": "normal", "mac_address": "fa:16:3e:11:22:33"}}`},
		{"PUT", "/v2.0/ports/" + id, aliceTok, `{"port": {"name": "q", "admin_state_up": false, "port_security_enabled": true, "device_id": "d", "device_owner": "compute:nova"}}`},
		{"POST", "/v2.0/security-groups", aliceTok, `{"security_group": {"name": "web", "description": "d", "stateful": true}}`},
		{"POST", "/v2.0/security-group-rules", aliceTok, `{"security_group_rule": {"security_group_id": "` + id + `", "direction": "ingress", "ethertype": "IPv4", "protocol": "tcp", "port_range_min": 22, "port_range_max": 22, "remote_ip_prefix": "0.0.0.0/0"}}`},
		{"POST", "/v2.0/security-group-rules", aliceTok, `{"security_group_rule": {"security_group_id": "` + id + `", "direction": "egress", "ethertype": "IPv6", "protocol": "icmp", "port_range_min": 8, "port_range_max": 0, "remote_group_id": "` + id + `"}}`},
		{"POST", "/v2.0/floatingips", aliceTok, `{"floatingip": {"floating_network_id": "` + id + `", "port_id": "` + id + `", "fixed_ip_address": "10.0.0.5", "floating_ip_address": "192.0.2.5"}}`},
		{"PUT", "/v2.0/floatingips/" + id, aliceTok, `{"floatingip": {"port_id": null}}`},
		{"POST", "/v2.0/routers", aliceTok, `{"router": {"name": "r", "external_gateway_info": {"network_id": "` + id + `", "enable_snat": true, "external_fixed_ips": [{"ip_address": "192.0.2.2"}]}}}`},
		{"PUT", "/v2.0/routers/" + id, aliceTok, `{"router": {"routes": [{"destination": "10.1.0.0/16", "nexthop": "10.0.0.9"}], "external_gateway_info": {}}}`},
		{"PUT", "/v2.0/routers/" + id + "/add_router_interface", aliceTok, `{"subnet_id": "` + id + `"}`},
		{"PUT", "/v2.0/routers/" + id + "/remove_router_interface", aliceTok, `{"port_id": "` + id + `"}`},
		{"PUT", "/v2.0/quotas/p-alice", adminTok, `{"quota": {"network": 20, "port": -1, "subnet": "5"}}`},
		{"GET", "/v2.0/networks", aliceTok, `name=net&fields=id&fields=name&limit=2&marker=` + id + `&sort_key=name&sort_dir=desc&shared=false`},
		{"GET", "/v2.0/ports", aliceTok, `device_id=x&fixed_ips=ip_address%3D10.0.0.5&fixed_ips=subnet_id%3D` + id + `&tags-any=a,b`},
	}
	targets := neutronTargets()
	for _, s := range seeds {
		f.Add(targetOf(targets, s.method, s.path, s.token), []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, target uint8, body []byte) {
		tg := targets[int(target)%len(targets)]
		var log bytes.Buffer
		api := New(Config{RPC: fuzzRPC{}, Verifier: fakeVerifier{
			adminTok: {TokenClaims: structs.TokenClaims{UserID: "u-admin", ProjectID: "p-admin", Roles: []string{"admin", "member", "reader"}}},
			aliceTok: {TokenClaims: structs.TokenClaims{UserID: "u-alice", ProjectID: "p-alice", Roles: []string{"member", "reader"}}},
		}, Logger: hclog.New(&hclog.LoggerOptions{Output: &log, Level: hclog.Error})})
		var r *http.Request
		if tg.method == http.MethodGet {
			r = httptest.NewRequest(tg.method, MountPath+tg.path, nil)
			r.URL.RawQuery = string(body)
		} else {
			r = httptest.NewRequest(tg.method, MountPath+tg.path, bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
		}
		r.Header.Set("X-Auth-Token", tg.token)
		w := httptest.NewRecorder()
		api.Handler().ServeHTTP(w, r)
		if strings.Contains(log.String(), "panic") || w.Code >= 500 {
			t.Fatalf("%s %s %q: status %d: %s\n%s", tg.method, tg.path, body, w.Code, w.Body, log.String())
		}
		if w.Code >= 400 {
			var e struct {
				NeutronError *struct{ Type, Message string }
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.NeutronError == nil || e.NeutronError.Type == "" || e.NeutronError.Message == "" {
				t.Fatalf("%s %s %q: status %d without a NeutronError body: %s", tg.method, tg.path, body, w.Code, w.Body)
			}
		}
	})
}
