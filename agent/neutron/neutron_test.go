package neutron

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent/identity"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

// Tokens of the test identities.
const (
	adminTok  = "tok-admin" // admin of p-admin
	aliceTok  = "tok-alice" // member of p-alice
	bobTok    = "tok-bob"   // member of p-bob
	noProject = "tok-unscoped"
)

type fakeVerifier map[string]*identity.Token

func (v fakeVerifier) Verify(token string) (*identity.Token, error) {
	if t, ok := v[token]; ok {
		return t, nil
	}
	return nil, structs.Errorf(structs.KindPermission, "invalid token")
}

type harness struct {
	t   *testing.T
	srv *httptest.Server
	s   *server.Server
}

// newHarness serves the API over a real single server, in process.
func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, nil)
}

// newHarnessWith is newHarness with the server's config tweaked.
func newHarnessWith(t *testing.T, tweak func(*server.Config)) *harness {
	t.Helper()
	cfg := &server.Config{NodeName: "neutron-test", NodeID: "00000000-0000-0000-0000-00000000b001",
		DataDir: t.TempDir(), BindAddr: "127.0.0.1", BootstrapExpect: 1, GossipFast: true, Logger: hclog.NewNullLogger()}
	if tweak != nil {
		tweak(cfg)
	}
	s, err := server.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Shutdown() })
	deadline := time.Now().Add(30 * time.Second)
	for !s.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatal("no leader")
		}
		time.Sleep(20 * time.Millisecond)
	}
	api := New(Config{RPC: s, Verifier: fakeVerifier{
		adminTok:  {TokenClaims: structs.TokenClaims{UserID: "u-admin", ProjectID: "p-admin", Roles: []string{"admin", "member", "reader"}}},
		aliceTok:  {TokenClaims: structs.TokenClaims{UserID: "u-alice", ProjectID: "p-alice", Roles: []string{"member", "reader"}}},
		bobTok:    {TokenClaims: structs.TokenClaims{UserID: "u-bob", ProjectID: "p-bob", Roles: []string{"member", "reader"}}},
		noProject: {TokenClaims: structs.TokenClaims{UserID: "u-alice"}},
	}})
	mux := http.NewServeMux()
	mux.Handle(MountPath, api.Handler())
	mux.Handle(MountPath+"/", api.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &harness{t: t, srv: srv, s: s}
}

type response struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (h *harness) do(method, path, token string, body any) *response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, _ := json.Marshal(b)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, h.srv.URL+path, rd)
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := &response{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			h.t.Fatalf("%s %s: not JSON: %s", method, path, raw)
		}
	}
	return out
}

func (r *response) want(t *testing.T, status int) *response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	return r
}

// neutronError asserts Neutron's error body.
func (r *response) neutronError(t *testing.T, status int, typ, msg string) {
	t.Helper()
	r.want(t, status)
	e, ok := r.body["NeutronError"].(map[string]any)
	if !ok || len(r.body) != 1 || len(e) != 3 {
		t.Fatalf("error body %s", r.raw)
	}
	if e["type"] != typ || !strings.Contains(e["message"].(string), msg) || e["detail"] != "" {
		t.Fatalf("error %v, want type %s and message containing %q", e, typ, msg)
	}
}

func (r *response) obj(key string) map[string]any {
	m, _ := r.body[key].(map[string]any)
	return m
}

func (r *response) list(key string) []any {
	l, _ := r.body[key].([]any)
	return l
}

func names(items []any) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.(map[string]any)["name"].(string))
	}
	return out
}

// create POSTs one object and returns it.
func (h *harness) create(path, key, token string, obj map[string]any) map[string]any {
	h.t.Helper()
	return h.do("POST", "/network/v2.0/"+path, token, map[string]any{key: obj}).want(h.t, 201).obj(key)
}

func TestDiscoveryAndAuth(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/network", "", nil).want(t, 200)
	v := r.list("versions")[0].(map[string]any)
	if v["id"] != "v2.0" || v["status"] != "CURRENT" || !strings.HasSuffix(v["links"].([]any)[0].(map[string]any)["href"].(string), "/network/v2.0/") {
		t.Fatalf("versions %s", r.raw)
	}
	r = h.do("GET", "/network/v2.0/", "", nil).want(t, 200)
	if len(r.list("resources")) != 7 {
		t.Fatalf("resources %s", r.raw)
	}
	r = h.do("GET", "/network/v2.0/networks", "", nil).want(t, 401)
	if r.obj("error")["code"] != float64(401) || r.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("401 %s", r.raw)
	}
	h.do("GET", "/network/v2.0/networks", "bogus", nil).want(t, 401)
	h.do("GET", "/network/v2.0/networks", noProject, nil).want(t, 403)
	r = h.do("GET", "/network/v2.0/extensions", aliceTok, nil).want(t, 200)
	aliases := map[string]bool{}
	for _, e := range r.list("extensions") {
		aliases[e.(map[string]any)["alias"].(string)] = true
	}
	for _, want := range []string{"router", "external-net", "security-group", "binding", "quotas", "port-security", "pagination", "sorting"} {
		if !aliases[want] {
			t.Errorf("extension %s missing", want)
		}
	}
	h.do("GET", "/network/v2.0/extensions/router", aliceTok, nil).want(t, 200)
	h.do("GET", "/network/v2.0/extensions/lbaas", aliceTok, nil).neutronError(t, 404, "HTTPNotFound", "lbaas")
	h.do("GET", "/network/v2.0/nothing", aliceTok, nil).neutronError(t, 404, "HTTPNotFound", "could not be found")
	r = h.do("PATCH", "/network/v2.0/networks", aliceTok, nil).want(t, 405)
	if r.header.Get("Allow") != "GET, POST" {
		t.Fatalf("Allow %q", r.header.Get("Allow"))
	}
}

func TestNetworksShapesFiltersFieldsPagination(t *testing.T) {
	h := newHarness(t)
	var ids []string
	for _, name := range []string{"charlie", "alpha", "bravo"} {
		n := h.create("networks", "network", aliceTok, map[string]any{"name": name})
		ids = append(ids, n["id"].(string))
	}
	n := h.do("GET", "/network/v2.0/networks/"+ids[0]+".json", aliceTok, nil).want(t, 200).obj("network")
	for k, want := range map[string]any{"name": "charlie", "admin_state_up": true, "status": "ACTIVE", "shared": false,
		"router:external": false, "mtu": float64(1450), "port_security_enabled": true, "project_id": "p-alice",
		"tenant_id": "p-alice", "revision_number": float64(1), "description": ""} {
		if n[k] != want {
			t.Errorf("network %s = %v, want %v", k, n[k], want)
		}
	}
	if _, ok := n["provider:network_type"]; ok {
		t.Error("a member sees provider attributes")
	}
	if subs, ok := n["subnets"].([]any); !ok || len(subs) != 0 {
		t.Errorf("subnets %v", n["subnets"])
	}
	if a := h.do("GET", "/network/v2.0/networks/"+ids[0], adminTok, nil).want(t, 200).obj("network"); a["provider:network_type"] != "vxlan" ||
		a["provider:segmentation_id"] == nil {
		t.Errorf("admin view %v", a)
	}
	// Filters: any attribute, repeated values OR-ed, ANDed across keys.
	r := h.do("GET", "/network/v2.0/networks?name=alpha&name=bravo&admin_state_up=True", aliceTok, nil).want(t, 200)
	if got := names(r.list("networks")); len(got) != 2 || got[0] != "alpha" || got[1] != "bravo" {
		t.Fatalf("filtered %v", got)
	}
	if got := h.do("GET", "/network/v2.0/networks?name=alpha&shared=true", aliceTok, nil).want(t, 200).list("networks"); len(got) != 0 {
		t.Fatalf("AND of filters %v", got)
	}
	h.do("GET", "/network/v2.0/networks?colour=red", aliceTok, nil).neutronError(t, 400, "HTTPBadRequest", "[colour] is invalid attribute for filtering")
	// fields.
	r = h.do("GET", "/network/v2.0/networks?fields=id&fields=name&name=alpha", aliceTok, nil).want(t, 200)
	if f := r.list("networks")[0].(map[string]any); len(f) != 2 || f["name"] != "alpha" {
		t.Fatalf("fields %v", f)
	}
	// Sorting and pagination with links.
	r = h.do("GET", "/network/v2.0/networks?sort_key=name&sort_dir=desc&limit=2", aliceTok, nil).want(t, 200)
	if got := names(r.list("networks")); fmt.Sprint(got) != "[charlie bravo]" {
		t.Fatalf("sorted page %v", got)
	}
	links := r.list("networks_links")
	var next string
	for _, l := range links {
		if l.(map[string]any)["rel"] == "next" {
			next = l.(map[string]any)["href"].(string)
		}
	}
	if next == "" {
		t.Fatalf("no next link: %s", r.raw)
	}
	u, _ := url.Parse(next)
	if u.Query().Get("sort_key") != "name" || u.Query().Get("marker") == "" {
		t.Fatalf("next link %s", next)
	}
	r = h.do("GET", u.RequestURI(), aliceTok, nil).want(t, 200)
	if got := names(r.list("networks")); fmt.Sprint(got) != "[alpha]" {
		t.Fatalf("second page %v", got)
	}
	for _, l := range r.list("networks_links") {
		if l.(map[string]any)["rel"] == "next" {
			t.Fatalf("last page has a next link: %s", r.raw)
		}
	}
	h.do("GET", "/network/v2.0/networks?limit=x", aliceTok, nil).want(t, 400)
	h.do("GET", "/network/v2.0/networks?sort_key=colour", aliceTok, nil).want(t, 400)
	h.do("GET", "/network/v2.0/networks?marker=nope&limit=1", aliceTok, nil).neutronError(t, 404, "NetworkNotFound", "nope")
	// Updates: attributes checked; read-only and unknown ones refused.
	r = h.do("PUT", "/network/v2.0/networks/"+ids[1], aliceTok, map[string]any{"network": map[string]any{"name": "alpha2", "admin_state_up": false}}).want(t, 200)
	if u := r.obj("network"); u["name"] != "alpha2" || u["admin_state_up"] != false || u["revision_number"] != float64(2) || u["status"] != "DOWN" {
		t.Fatalf("updated %v", u)
	}
	h.do("PUT", "/network/v2.0/networks/"+ids[1], aliceTok, map[string]any{"network": map[string]any{"tenant_id": "x"}}).
		neutronError(t, 400, "HTTPBadRequest", "Cannot update read-only attribute tenant_id")
	h.do("POST", "/network/v2.0/networks", aliceTok, map[string]any{"network": map[string]any{"colour": "red"}}).
		neutronError(t, 400, "HTTPBadRequest", "Unrecognized attribute(s) 'colour'")
	h.do("POST", "/network/v2.0/networks", aliceTok, map[string]any{"network": map[string]any{"admin_state_up": "perhaps"}}).
		neutronError(t, 400, "HTTPBadRequest", "Invalid input for admin_state_up")
	h.do("POST", "/network/v2.0/networks", aliceTok, `{"network": `).neutronError(t, 400, "HTTPBadRequest", "Malformed request body")
	h.do("DELETE", "/network/v2.0/networks/"+ids[2], aliceTok, nil).want(t, 204)
	h.do("GET", "/network/v2.0/networks/"+ids[2], aliceTok, nil).neutronError(t, 404, "NetworkNotFound", "Network "+ids[2]+" could not be found.")
}

func TestNetworkPolicy(t *testing.T) {
	h := newHarness(t)
	mine := h.create("networks", "network", aliceTok, map[string]any{"name": "mine"})
	h.do("POST", "/network/v2.0/networks", aliceTok, map[string]any{"network": map[string]any{"shared": true}}).
		neutronError(t, 403, "PolicyNotAuthorized", "create_network:shared")
	h.do("POST", "/network/v2.0/networks", aliceTok, map[string]any{"network": map[string]any{"router:external": true}}).
		neutronError(t, 403, "PolicyNotAuthorized", "router:external")
	h.do("POST", "/network/v2.0/networks", aliceTok, map[string]any{"network": map[string]any{"provider:network_type": "flat"}}).
		neutronError(t, 403, "PolicyNotAuthorized", "provider:network_type")
	h.do("POST", "/network/v2.0/networks", aliceTok, map[string]any{"network": map[string]any{"project_id": "p-bob"}}).
		neutronError(t, 400, "BadRequest", "requires admin privileges")
	shared := h.create("networks", "network", adminTok, map[string]any{"name": "shared", "shared": true})
	ext := h.create("networks", "network", adminTok, map[string]any{"name": "ext", "router:external": true,
		"provider:network_type": "flat", "provider:physical_network": "public"})
	h.create("networks", "network", adminTok, map[string]any{"name": "admins-own"})
	// Bob sees the shared and the external network, not Alice's or the
	// admin's own.
	r := h.do("GET", "/network/v2.0/networks", bobTok, nil).want(t, 200)
	if got := names(r.list("networks")); fmt.Sprint(got) != "[shared ext]" {
		t.Fatalf("bob sees %v", got)
	}
	h.do("GET", "/network/v2.0/networks/"+mine["id"].(string), bobTok, nil).neutronError(t, 404, "NetworkNotFound", mine["id"].(string))
	h.do("DELETE", "/network/v2.0/networks/"+mine["id"].(string), bobTok, nil).want(t, 404)
	h.do("PUT", "/network/v2.0/networks/"+shared["id"].(string), bobTok, map[string]any{"network": map[string]any{"name": "x"}}).
		neutronError(t, 403, "PolicyNotAuthorized", "update_network")
	h.do("DELETE", "/network/v2.0/networks/"+shared["id"].(string), bobTok, nil).want(t, 403)
	// Admins see everything, with all_tenants or not.
	if got := h.do("GET", "/network/v2.0/networks", adminTok, nil).want(t, 200).list("networks"); len(got) != 4 {
		t.Fatalf("admin sees %d", len(got))
	}
	// Ports: not on another project's network; on the shared one, yes,
	// without choosing the address.
	h.do("POST", "/network/v2.0/ports", bobTok, map[string]any{"port": map[string]any{"network_id": ext["id"]}}).
		neutronError(t, 403, "PolicyNotAuthorized", "not allowed to create port")
	h.create("subnets", "subnet", adminTok, map[string]any{"network_id": shared["id"], "cidr": "10.5.0.0/24", "ip_version": 4})
	h.do("POST", "/network/v2.0/ports", bobTok, map[string]any{"port": map[string]any{"network_id": shared["id"],
		"fixed_ips": []any{map[string]any{"ip_address": "10.5.0.50"}}}}).neutronError(t, 403, "PolicyNotAuthorized", "fixed_ips:ip_address")
	p := h.create("ports", "port", bobTok, map[string]any{"network_id": shared["id"]})
	if _, ok := p["binding:host_id"]; ok {
		t.Error("a member sees binding:host_id")
	}
	// The network's owner (the admin) sees Bob's port; Alice does not.
	h.do("GET", "/network/v2.0/ports/"+p["id"].(string), aliceTok, nil).neutronError(t, 404, "PortNotFound", p["id"].(string))
	if a := h.do("GET", "/network/v2.0/ports/"+p["id"].(string), adminTok, nil).want(t, 200).obj("port"); a["binding:vif_type"] != "unbound" {
		t.Fatalf("admin port view %v", a)
	}
	// Sharing cannot stop while another project uses the network.
	h.do("PUT", "/network/v2.0/networks/"+shared["id"].(string), adminTok, map[string]any{"network": map[string]any{"shared": false}}).
		neutronError(t, 409, "InvalidSharedSetting", "Multiple tenants are using it")
}

func TestSubnetsAndPortsIPAM(t *testing.T) {
	h := newHarness(t)
	n := h.create("networks", "network", aliceTok, map[string]any{"name": "n"})
	nid := n["id"].(string)
	s := h.create("subnets", "subnet", aliceTok, map[string]any{"network_id": nid, "cidr": "10.9.0.0/29", "ip_version": 4, "name": "s"})
	if s["gateway_ip"] != "10.9.0.1" || s["enable_dhcp"] != true || fmt.Sprint(s["allocation_pools"]) != "[map[end:10.9.0.6 start:10.9.0.2]]" ||
		s["ipv6_address_mode"] != nil || s["cidr"] != "10.9.0.0/29" {
		t.Fatalf("subnet %v", s)
	}
	h.do("POST", "/network/v2.0/subnets", aliceTok, map[string]any{"subnet": map[string]any{"network_id": nid, "cidr": "10.9.0.0/28", "ip_version": 4}}).
		neutronError(t, 400, "InvalidInput", "overlaps with another subnet")
	h.do("POST", "/network/v2.0/subnets", aliceTok, map[string]any{"subnet": map[string]any{"network_id": nid, "cidr": "10.9.1.5/24", "ip_version": 4}}).
		neutronError(t, 400, "InvalidInput", "'10.9.1.0/24' is recommended")
	h.do("POST", "/network/v2.0/subnets", aliceTok, map[string]any{"subnet": map[string]any{"network_id": nid, "cidr": "10.9.2.0/24"}}).
		neutronError(t, 400, "HTTPBadRequest", "Required attribute 'ip_version' not specified")
	// Five ports fill the /29; the sixth finds none.
	var ports []string
	for i := 0; i < 5; i++ {
		p := h.create("ports", "port", aliceTok, map[string]any{"network_id": nid, "name": fmt.Sprint("p", i)})
		ips := p["fixed_ips"].([]any)
		if got := ips[0].(map[string]any)["ip_address"]; got != fmt.Sprintf("10.9.0.%d", i+2) {
			t.Fatalf("port %d got %v", i, got)
		}
		if !strings.HasPrefix(p["mac_address"].(string), "fa:16:3e:") || p["status"] != "DOWN" || len(p["security_groups"].([]any)) != 1 {
			t.Fatalf("port %v", p)
		}
		ports = append(ports, p["id"].(string))
	}
	h.do("POST", "/network/v2.0/ports", aliceTok, map[string]any{"port": map[string]any{"network_id": nid}}).
		neutronError(t, 409, "IpAddressGenerationFailure", "No more IP addresses available on network "+nid+".")
	// A delete releases its address.
	h.do("DELETE", "/network/v2.0/ports/"+ports[2], aliceTok, nil).want(t, 204)
	p := h.create("ports", "port", aliceTok, map[string]any{"network_id": nid})
	if got := p["fixed_ips"].([]any)[0].(map[string]any)["ip_address"]; got != "10.9.0.4" {
		t.Fatalf("reused %v", got)
	}
	// Filters on ports: by fixed IP, by network.
	r := h.do("GET", "/network/v2.0/ports?fixed_ips=ip_address%3D10.9.0.3&network_id="+nid, aliceTok, nil).want(t, 200)
	if got := r.list("ports"); len(got) != 1 || got[0].(map[string]any)["id"] != ports[1] {
		t.Fatalf("fixed_ips filter %s", r.raw)
	}
	h.do("POST", "/network/v2.0/ports", aliceTok, map[string]any{"port": map[string]any{"network_id": nid,
		"fixed_ips": []any{map[string]any{"ip_address": "10.9.0.3"}}}}).neutronError(t, 409, "IpAddressAlreadyAllocated", "10.9.0.3")
	// Updating a port's addresses reallocates.
	h.do("DELETE", "/network/v2.0/ports/"+ports[4], aliceTok, nil).want(t, 204)
	r = h.do("PUT", "/network/v2.0/ports/"+ports[0], aliceTok, map[string]any{"port": map[string]any{"fixed_ips": []any{map[string]any{"ip_address": "10.9.0.6"}}}}).want(t, 200)
	if got := r.obj("port")["fixed_ips"].([]any); len(got) != 1 || got[0].(map[string]any)["ip_address"] != "10.9.0.6" {
		t.Fatalf("updated fixed ips %v", got)
	}
	h.do("PUT", "/network/v2.0/ports/"+ports[0], aliceTok, map[string]any{"port": map[string]any{"network_id": "x"}}).
		neutronError(t, 400, "HTTPBadRequest", "read-only attribute network_id")
	// A subnet with ports cannot go; the network neither.
	h.do("DELETE", "/network/v2.0/subnets/"+s["id"].(string), aliceTok, nil).neutronError(t, 409, "SubnetInUse", "One or more ports")
	h.do("DELETE", "/network/v2.0/networks/"+nid, aliceTok, nil).neutronError(t, 409, "NetworkInUse", "ports still in use")
	// IPv6 SLAAC: the address derives from the MAC.
	v6 := h.create("subnets", "subnet", aliceTok, map[string]any{"network_id": nid, "cidr": "2001:db8::/64", "ip_version": 6,
		"ipv6_address_mode": "slaac", "ipv6_ra_mode": "slaac"})
	p6 := h.create("ports", "port", aliceTok, map[string]any{"network_id": nid, "mac_address": "fa:16:3e:11:22:33",
		"fixed_ips": []any{map[string]any{"subnet_id": v6["id"]}}})
	if got := p6["fixed_ips"].([]any)[0].(map[string]any)["ip_address"]; got != "2001:db8::f816:3eff:fe11:2233" {
		t.Fatalf("SLAAC address %v", got)
	}
	// Bulk create is all or nothing.
	r = h.do("POST", "/network/v2.0/ports", aliceTok, map[string]any{"ports": []any{
		map[string]any{"network_id": nid, "fixed_ips": []any{map[string]any{"subnet_id": v6["id"]}}, "name": "bulk1"},
		map[string]any{"network_id": nid, "fixed_ips": []any{map[string]any{"ip_address": "10.9.0.3"}}, "name": "bulk2"},
	}})
	r.neutronError(t, 409, "IpAddressAlreadyAllocated", "10.9.0.3")
	if got := h.do("GET", "/network/v2.0/ports?name=bulk1", aliceTok, nil).want(t, 200).list("ports"); len(got) != 0 {
		t.Fatal("a failed bulk create left a port")
	}
	r = h.do("POST", "/network/v2.0/ports", aliceTok, map[string]any{"ports": []any{
		map[string]any{"network_id": nid, "fixed_ips": []any{map[string]any{"subnet_id": v6["id"]}}, "name": "bulk1"},
		map[string]any{"network_id": nid, "fixed_ips": []any{map[string]any{"subnet_id": v6["id"]}}, "name": "bulk2"},
	}}).want(t, 201)
	if len(r.list("ports")) != 2 {
		t.Fatalf("bulk %s", r.raw)
	}
}

func TestSecurityGroupsRoutersFloatingIPs(t *testing.T) {
	h := newHarness(t)
	// The first listing creates the project's default group.
	r := h.do("GET", "/network/v2.0/security-groups", aliceTok, nil).want(t, 200)
	groups := r.list("security_groups")
	if len(groups) != 1 {
		t.Fatalf("groups %s", r.raw)
	}
	def := groups[0].(map[string]any)
	if def["name"] != "default" || len(def["security_group_rules"].([]any)) != 4 {
		t.Fatalf("default group %v", def)
	}
	h.do("DELETE", "/network/v2.0/security-groups/"+def["id"].(string), aliceTok, nil).
		neutronError(t, 409, "SecurityGroupCannotRemoveDefault", "Insufficient rights")
	web := h.create("security-groups", "security_group", aliceTok, map[string]any{"name": "web"})
	if len(web["security_group_rules"].([]any)) != 2 {
		t.Fatalf("new group rules %v", web)
	}
	rule := map[string]any{"security_group_id": web["id"], "direction": "ingress", "protocol": "tcp", "port_range_min": 80,
		"port_range_max": 80, "remote_ip_prefix": "0.0.0.0/0"}
	ru := h.create("security-group-rules", "security_group_rule", aliceTok, rule)
	if ru["port_range_min"] != float64(80) || ru["ethertype"] != "IPv4" || ru["remote_group_id"] != nil {
		t.Fatalf("rule %v", ru)
	}
	h.do("POST", "/network/v2.0/security-group-rules", aliceTok, map[string]any{"security_group_rule": rule}).
		neutronError(t, 409, "SecurityGroupRuleExists", ru["id"].(string))
	h.do("POST", "/network/v2.0/security-group-rules", bobTok, map[string]any{"security_group_rule": rule}).
		neutronError(t, 404, "SecurityGroupNotFound", web["id"].(string))
	rule["port_range_min"] = 90
	h.do("POST", "/network/v2.0/security-group-rules", aliceTok, map[string]any{"security_group_rule": rule}).
		neutronError(t, 400, "BadRequest", "port_range_min must be <= port_range_max")

	// An external network, a tenant network, a router between them.
	ext := h.create("networks", "network", adminTok, map[string]any{"name": "public", "router:external": true})
	h.create("subnets", "subnet", adminTok, map[string]any{"network_id": ext["id"], "cidr": "172.24.4.0/24", "ip_version": 4, "enable_dhcp": false})
	n := h.create("networks", "network", aliceTok, map[string]any{"name": "n"})
	s := h.create("subnets", "subnet", aliceTok, map[string]any{"network_id": n["id"], "cidr": "10.0.0.0/24", "ip_version": 4})
	rt := h.create("routers", "router", aliceTok, map[string]any{"name": "r", "external_gateway_info": map[string]any{"network_id": ext["id"]}})
	gw := rt["external_gateway_info"].(map[string]any)
	if gw["enable_snat"] != true || gw["external_fixed_ips"].([]any)[0].(map[string]any)["ip_address"] != "172.24.4.2" {
		t.Fatalf("router %v", rt)
	}
	h.do("POST", "/network/v2.0/routers", aliceTok, map[string]any{"router": map[string]any{"external_gateway_info": map[string]any{
		"network_id": ext["id"], "enable_snat": false}}}).neutronError(t, 403, "PolicyNotAuthorized", "enable_snat")
	path := "/network/v2.0/routers/" + rt["id"].(string)
	iface := h.do("PUT", path+"/add_router_interface", aliceTok, map[string]any{"subnet_id": s["id"]}).want(t, 200).body
	if iface["subnet_id"] != s["id"] || iface["network_id"] != n["id"] || iface["port_id"] == "" || iface["id"] != rt["id"] {
		t.Fatalf("interface %v", iface)
	}
	h.do("PUT", path+"/add_router_interface", aliceTok, map[string]any{"subnet_id": s["id"]}).neutronError(t, 400, "BadRequest", "already has a port on subnet")
	// The interface holds the gateway address, and cannot be deleted as
	// a port.
	ip := h.do("GET", "/network/v2.0/ports/"+iface["port_id"].(string), aliceTok, nil).want(t, 200).obj("port")
	if ip["device_owner"] != "network:router_interface" || ip["fixed_ips"].([]any)[0].(map[string]any)["ip_address"] != "10.0.0.1" {
		t.Fatalf("interface port %v", ip)
	}
	h.do("DELETE", "/network/v2.0/ports/"+iface["port_id"].(string), aliceTok, nil).neutronError(t, 409, "ServicePortInUse", "router_interface")
	// A floating IP, associated with a port behind the router.
	vm := h.create("ports", "port", aliceTok, map[string]any{"network_id": n["id"]})
	fip := h.create("floatingips", "floatingip", aliceTok, map[string]any{"floating_network_id": ext["id"], "port_id": vm["id"]})
	if fip["floating_ip_address"] != "172.24.4.3" || fip["router_id"] != rt["id"] || fip["fixed_ip_address"] != "10.0.0.2" || fip["status"] != "ACTIVE" {
		t.Fatalf("floating ip %v", fip)
	}
	h.do("POST", "/network/v2.0/floatingips", aliceTok, map[string]any{"floatingip": map[string]any{"floating_network_id": n["id"]}}).
		neutronError(t, 400, "BadRequest", "not a valid external network")
	h.do("POST", "/network/v2.0/floatingips", aliceTok, map[string]any{"floatingip": map[string]any{"floating_network_id": ext["id"],
		"floating_ip_address": "172.24.4.99"}}).neutronError(t, 403, "PolicyNotAuthorized", "floating_ip_address")
	h.do("PUT", path+"/remove_router_interface", aliceTok, map[string]any{"subnet_id": s["id"]}).
		neutronError(t, 409, "RouterInterfaceInUseByFloatingIP", "required by one or more floating IPs")
	h.do("DELETE", path, aliceTok, nil).neutronError(t, 409, "RouterInUse", "still has ports")
	// Disassociate, then everything comes apart.
	r = h.do("PUT", "/network/v2.0/floatingips/"+fip["id"].(string), aliceTok, map[string]any{"floatingip": map[string]any{"port_id": nil}}).want(t, 200)
	if f := r.obj("floatingip"); f["port_id"] != nil || f["router_id"] != nil || f["status"] != "DOWN" {
		t.Fatalf("disassociated %v", f)
	}
	h.do("PUT", path+"/remove_router_interface", aliceTok, map[string]any{"subnet_id": s["id"]}).want(t, 200)
	h.do("PUT", path+"/remove_router_interface", aliceTok, map[string]any{"subnet_id": s["id"]}).neutronError(t, 404, "RouterInterfaceNotFoundForSubnet", "no interface")
	h.do("DELETE", path, aliceTok, nil).want(t, 204)
	h.do("DELETE", "/network/v2.0/floatingips/"+fip["id"].(string), aliceTok, nil).want(t, 204)
	if got := h.do("GET", "/network/v2.0/ports?network_id="+ext["id"].(string), adminTok, nil).want(t, 200).list("ports"); len(got) != 0 {
		t.Fatalf("external ports left: %v", got)
	}
}

func TestQuotas(t *testing.T) {
	h := newHarness(t)
	r := h.do("GET", "/network/v2.0/quotas/p-alice", aliceTok, nil).want(t, 200)
	if q := r.obj("quota"); q["network"] != float64(100) || q["port"] != float64(500) || q["security_group_rule"] != float64(100) {
		t.Fatalf("quota %v", q)
	}
	h.do("GET", "/network/v2.0/quotas/p-bob", aliceTok, nil).want(t, 403)
	h.do("PUT", "/network/v2.0/quotas/p-alice", aliceTok, map[string]any{"quota": map[string]any{"network": 1}}).want(t, 403)
	h.do("PUT", "/network/v2.0/quotas/p-alice", adminTok, map[string]any{"quota": map[string]any{"network": 1}}).want(t, 200)
	h.create("networks", "network", aliceTok, map[string]any{"name": "one"})
	h.do("POST", "/network/v2.0/networks", aliceTok, map[string]any{"network": map[string]any{"name": "two"}}).
		neutronError(t, 409, "OverQuota", "Quota exceeded for resources: ['network'].")
	d := h.do("GET", "/network/v2.0/quotas/p-alice/details", aliceTok, nil).want(t, 200).obj("quota")
	if n := d["network"].(map[string]any); n["limit"] != float64(1) || n["used"] != float64(1) {
		t.Fatalf("details %v", d)
	}
	h.do("DELETE", "/network/v2.0/quotas/p-alice", adminTok, nil).want(t, 204)
	h.create("networks", "network", aliceTok, map[string]any{"name": "two"})
}
