package agent

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/remoteconsoles"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/stratus-cloud/stratus/internal/libvirtlock"
	"github.com/stratus-cloud/stratus/structs"
)

// consoleWait bounds the waits of the console tests: TCG guests on two
// busy cores are slow.
const consoleWait = 120 * time.Second

// needLibvirtd skips a test when libvirtd is not reachable, or fails it
// under CI=true, where that is a broken setup.
func needLibvirtd(t *testing.T) {
	t.Helper()
	// Hold the machine's libvirt test lock so that virt/libvirt's restart
	// test never stops libvirtd under this test's guests.
	libvirtlock.Shared(t)
	lv, err := dialLibvirt()
	if err == nil {
		_ = lv.Disconnect()
		return
	}
	msg := fmt.Sprintf("libvirtd is not reachable at qemu:///system: %v (as root, scripts/libvirt-setup.sh starts it)", err)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func dialLibvirt() (*golibvirt.Libvirt, error) {
	u, err := url.Parse("qemu:///system")
	if err != nil {
		return nil, err
	}
	return golibvirt.ConnectToURI(u)
}

// libvirtAgent starts a dev agent whose host runs real QEMU guests
// through libvirtd, in a namespace of its own that is purged at cleanup.
func libvirtAgent(t *testing.T) (*Agent, string) {
	t.Helper()
	needLibvirtd(t)
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	ns := "con" + hex.EncodeToString(b)
	dir := t.TempDir()
	t.Cleanup(func() { purgeLibvirtNamespace(t, ns) })
	a := testAgent(t, func(c *Config) {
		c.Client = &ClientConfig{Driver: "libvirt", Libvirt: &LibvirtConfig{Namespace: ns, ImagesDir: dir + "/images"}}
	})
	tiny := &structs.Flavor{ID: "c1", Name: "c.tiny", VCPUs: 1, MemoryMB: 64, RootGB: 1, RxTxFactor: 1, IsPublic: true, ExtraSpecs: map[string]string{}}
	if err := a.rpc.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{tiny}}, &structs.FlavorUpsertResponse{}); err != nil {
		t.Fatal(err)
	}
	waitLong(t, "the libvirt host up", func() error {
		var out structs.HostListResponse
		if err := a.rpc.RPC("Host.List", &structs.HostListRequest{}, &out); err != nil {
			return err
		}
		for _, h := range out.Hosts {
			if h.Driver == "libvirt" && h.Up() {
				return nil
			}
		}
		return errors.New("no libvirt host up")
	})
	return a, ns
}

// purgeLibvirtNamespace removes the namespace's domains and pool,
// whatever the test left.
func purgeLibvirtNamespace(t *testing.T, ns string) {
	lv, err := dialLibvirt()
	if err != nil {
		t.Errorf("cleanup of namespace %s: %v", ns, err)
		return
	}
	defer func() { _ = lv.Disconnect() }()
	doms, _, _ := lv.ConnectListAllDomains(1, 0)
	for _, dom := range doms {
		if strings.HasPrefix(dom.Name, "stratus-"+ns+"-") {
			_ = lv.DomainDestroy(dom)
			_ = lv.DomainUndefineFlags(dom, golibvirt.DomainUndefineManagedSave|golibvirt.DomainUndefineNvram)
		}
	}
	pool, err := lv.StoragePoolLookupByName("stratus-" + ns)
	if err != nil {
		return
	}
	vols, _, _ := lv.StoragePoolListAllVolumes(pool, 1, 0)
	for _, v := range vols {
		_ = lv.StorageVolDelete(v, 0)
	}
	_ = lv.StoragePoolDestroy(pool)
	_ = lv.StoragePoolUndefine(pool)
}

// waitLong is waitFor with the console tests' generous bound.
func waitLong(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(consoleWait)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// bootBlank boots an instance of dev mode's cirros, an empty disk
// (SeaBIOS finds nothing to boot, and says so on the serial console),
// and waits until ACTIVE. testAgent returns once the dev flavors are
// seeded, which dev mode does only after the image is active.
func bootBlank(t *testing.T, a *Agent, name string) *structs.Instance {
	t.Helper()
	inst := bootActive(t, a, &structs.InstanceCreateRequest{Name: name, FlavorID: "c1", ImageID: "cirros",
		ProjectID: "p1", UserID: "u1", RequestID: "req-" + name}, nil)
	t.Cleanup(func() {
		_ = a.rpc.RPC("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{inst.ID}, ProjectID: "p1", Admin: true, Force: true}, &structs.GenericResponse{})
	})
	return inst
}

// computeClient is gophercloud's compute client as the dev admin.
func computeClient(t *testing.T, a *Agent, microversion string) *gophercloud.ServiceClient {
	t.Helper()
	ctx := t.Context()
	var provider *gophercloud.ProviderClient
	// Dev mode seeds the admin user in the background.
	waitLong(t, "the dev admin to authenticate", func() error {
		var err error
		p, err := openstack.NewClient(a.url("/identity/v3"))
		if err != nil {
			return err
		}
		// A hung request must not outlive the test's own waits.
		p.HTTPClient = http.Client{Timeout: 60 * time.Second}
		err = openstack.Authenticate(ctx, p, gophercloud.AuthOptions{
			IdentityEndpoint: a.url("/identity/v3"), Username: "admin", Password: "admin", TenantName: "admin", DomainName: "Default",
		})
		provider = p
		return err
	})
	compute, err := openstack.NewComputeV2(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	compute.Microversion = microversion
	return compute
}

// tokenOf is the token inside a console URL: ?token=, or in a noVNC
// page's ?path=.
func tokenOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if tok := u.Query().Get("token"); tok != "" {
		return tok
	}
	p, err := url.Parse("/" + u.Query().Get("path"))
	if err != nil || p.Query().Get("token") == "" {
		t.Fatalf("no token in console URL %s", raw)
	}
	return p.Query().Get("token")
}

// rfbHandshake opens the noVNC websocket with a token and runs the RFB
// version exchange and the security types message.
// closedWithoutData opens the noVNC websocket with a token the proxy
// must refuse, as tempest does: the handshake succeeds, then the proxy
// closes the connection without sending a byte (not even a close frame).
func closedWithoutData(t *testing.T, addr, token string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, consoleWait)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(consoleWait))
	fmt.Fprintf(conn, "GET /console/websockify?token=%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: binary\r\n\r\n",
		url.QueryEscape(token), addr)
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 101") {
		t.Fatalf("websocket handshake with a refused token: %q %v", status, err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("handshake headers: %v", err)
		}
		if line == "\r\n" {
			break
		}
	}
	rest, err := io.ReadAll(br)
	if len(rest) != 0 || err != nil {
		t.Fatalf("the proxy sent %q (%v) for a refused token, want the connection closed", rest, err)
	}
}

func rfbHandshake(ctx context.Context, a *Agent, token string) ([]byte, error) {
	ws := "ws://" + a.HTTPAddr() + "/console/websockify?token=" + url.QueryEscape(token)
	c, resp, err := websocket.Dial(ctx, ws, &websocket.DialOptions{Subprotocols: []string{"binary"}})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("status %d: %w", resp.StatusCode, err)
		}
		return nil, err
	}
	defer c.CloseNow()
	conn := websocket.NetConn(ctx, c, websocket.MessageBinary)
	version := make([]byte, 12)
	if _, err := io.ReadFull(conn, version); err != nil {
		return nil, fmt.Errorf("read RFB version: %w", err)
	}
	if !strings.HasPrefix(string(version), "RFB 003.") {
		return nil, fmt.Errorf("server version %q", version)
	}
	if _, err := conn.Write([]byte("RFB 003.008\n")); err != nil {
		return nil, err
	}
	n := make([]byte, 1)
	if _, err := io.ReadFull(conn, n); err != nil || n[0] == 0 {
		return nil, fmt.Errorf("security types count %v: %w", n, err)
	}
	types := make([]byte, n[0])
	if _, err := io.ReadFull(conn, types); err != nil {
		return nil, err
	}
	return types, nil
}

// TestConsolesOfARealDomain drives the consoles of a real QEMU guest
// through the Compute API (gophercloud) and the agent's proxies: a noVNC
// websocket completes the RFB handshake with a valid token and is refused
// with a used or an expired one; the xvpvnc proxy does the same over
// plain TCP; the serial websocket carries the guest's console bytes; and
// os-getConsoleOutput returns the console log.
func TestConsolesOfARealDomain(t *testing.T) {
	t.Parallel()
	a, ns := libvirtAgent(t)
	inst := bootBlank(t, a, "con-vm")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	compute := computeClient(t, a, "2.6")

	vnc, err := remoteconsoles.Create(ctx, compute, inst.ID, remoteconsoles.CreateOpts{
		Protocol: remoteconsoles.ConsoleProtocolVNC, Type: remoteconsoles.ConsoleTypeNoVNC}).Extract()
	if err != nil {
		t.Fatalf("remote console: %v", err)
	}
	if vnc.Protocol != "vnc" || vnc.Type != "novnc" || !strings.HasPrefix(vnc.URL, "http://"+a.HTTPAddr()+"/ui/vendor/novnc/vnc_lite.html?path=") {
		t.Fatalf("remote console %+v", vnc)
	}
	token := tokenOf(t, vnc.URL)
	types, err := rfbHandshake(ctx, a, token)
	if err != nil {
		t.Fatalf("RFB handshake through the proxy: %v", err)
	}
	if !strings.ContainsRune(string(types), 1) && !strings.ContainsRune(string(types), 2) {
		t.Fatalf("security types %v offer neither None nor VNC auth", types)
	}
	// The token was used up.
	closedWithoutData(t, a.HTTPAddr(), token)
	// An expired token (issued with a TTL of a nanosecond) is refused.
	var expired structs.ConsoleAuthorizeResponse
	if err := a.rpc.RPC("Console.Authorize", &structs.ConsoleAuthorizeRequest{InstanceID: inst.ID, ConsoleType: "novnc",
		HostID: inst.HostID, Target: "127.0.0.1:5900", TTL: time.Nanosecond}, &expired); err != nil {
		t.Fatal(err)
	}
	closedWithoutData(t, a.HTTPAddr(), expired.Token)

	t.Run("xvpvnc", func(t *testing.T) { checkXVPVNC(t, ctx, compute, inst.ID) })
	t.Run("serial", func(t *testing.T) { checkSerial(t, ctx, a, compute, ns, inst.ID) })
	t.Run("output", func(t *testing.T) {
		// SeaBIOS logs its boot to the serial console.
		waitLong(t, "console output", func() error {
			out, err := servers.ShowConsoleOutput(ctx, compute, inst.ID, servers.ShowConsoleOutputOpts{Length: 50}).Extract()
			if err != nil {
				return err
			}
			if !strings.Contains(out, "SeaBIOS") && !strings.Contains(out, "boot") {
				return fmt.Errorf("console output %q", out)
			}
			return nil
		})
	})
}

// checkXVPVNC opens an xvpvnc console and speaks RFB through the plain
// TCP proxy after its CONNECT line; the token works once.
func checkXVPVNC(t *testing.T, ctx context.Context, compute *gophercloud.ServiceClient, id string) {
	rc, err := remoteconsoles.Create(ctx, compute, id, remoteconsoles.CreateOpts{
		Protocol: remoteconsoles.ConsoleProtocolVNC, Type: remoteconsoles.ConsoleTypeXVPVNC}).Extract()
	if err != nil {
		t.Fatalf("xvpvnc console: %v", err)
	}
	u, err := url.Parse(rc.URL)
	if err != nil {
		t.Fatal(err)
	}
	connect := func() (string, net.Conn, *bufio.Reader) {
		conn, err := net.DialTimeout("tcp", u.Host, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		_ = conn.SetDeadline(time.Now().Add(consoleWait))
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\n\r\n", u.RequestURI())
		br := bufio.NewReader(conn)
		status, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("xvpvnc answer: %v", err)
		}
		return status, conn, br
	}
	status, _, br := connect()
	if !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Fatalf("xvpvnc answered %q", status)
	}
	if blank, _ := br.ReadString('\n'); blank != "\r\n" {
		t.Fatalf("xvpvnc header end %q", blank)
	}
	version := make([]byte, 12)
	if _, err := io.ReadFull(br, version); err != nil || !strings.HasPrefix(string(version), "RFB 003.") {
		t.Fatalf("RFB version through xvpvnc: %q, %v", version, err)
	}
	if status, _, _ := connect(); !strings.HasPrefix(status, "HTTP/1.1 403") {
		t.Fatalf("a used xvpvnc token answered %q", status)
	}
}

// checkSerial opens the serial websocket, resets the guest (SeaBIOS
// prints again) and expects its bytes through the proxy.
func checkSerial(t *testing.T, ctx context.Context, a *Agent, compute *gophercloud.ServiceClient, ns, id string) {
	rc, err := remoteconsoles.Create(ctx, compute, id, remoteconsoles.CreateOpts{
		Protocol: remoteconsoles.ConsoleProtocolSerial, Type: remoteconsoles.ConsoleTypeSerial}).Extract()
	if err != nil {
		t.Fatalf("serial console: %v", err)
	}
	if !strings.HasPrefix(rc.URL, "ws://"+a.HTTPAddr()+"/console/serial?token=") {
		t.Fatalf("serial console URL %s", rc.URL)
	}
	c, resp, err := websocket.Dial(ctx, rc.URL, nil)
	if err != nil {
		t.Fatalf("serial websocket: %v (%v)", err, resp)
	}
	defer c.CloseNow()
	lv, err := dialLibvirt()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lv.Disconnect() }()
	dom, err := lv.DomainLookupByName("stratus-" + ns + "-" + id)
	if err != nil {
		t.Fatalf("look up the domain: %v", err)
	}
	got := make(chan []byte, 64)
	go func() {
		defer close(got)
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			got <- data
		}
	}()
	var seen strings.Builder
	reset := time.NewTicker(10 * time.Second)
	defer reset.Stop()
	if err := lv.DomainReset(dom, 0); err != nil {
		t.Fatalf("reset the guest: %v", err)
	}
	for !strings.Contains(seen.String(), "SeaBIOS") && !strings.Contains(seen.String(), "oot") {
		select {
		case data, ok := <-got:
			if !ok {
				t.Fatalf("serial websocket closed after %q", seen.String())
			}
			seen.Write(data)
		case <-reset.C:
			// The guest may have been between boots: reset it again.
			_ = lv.DomainReset(dom, 0)
		case <-ctx.Done():
			t.Fatalf("no guest console bytes through the serial proxy (got %q)", seen.String())
		}
	}
}

// TestConsoleRoutesWithoutLibvirt covers what needs no hypervisor: the
// native console routes on the fake driver (which has VNC but no serial),
// the Compute API's errors, and the admin's token look-up.
func TestConsoleRoutesWithoutLibvirt(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	waitDevImages(t, a)
	id := bootActive(t, a, &structs.InstanceCreateRequest{Name: "fk", FlavorID: "1", ImageID: "cirros",
		ProjectID: "p1", UserID: "u1", RequestID: "req-fk"}, nil).ID
	code, _, body := do(t, "GET", a.url("/v1/instances/"+id+"/console-output?tail=2"), nil)
	if code != http.StatusOK || !strings.Contains(string(body), "login:") {
		t.Fatalf("console output: %d %s", code, body)
	}
	code, _, body = do(t, "POST", a.url("/v1/instances/"+id+"/consoles"), strings.NewReader(`{"Type":"serial"}`))
	if code != http.StatusNotImplemented {
		t.Fatalf("serial console on the fake driver: %d %s", code, body)
	}
	code, _, body = do(t, "POST", a.url("/v1/instances/"+id+"/consoles"), strings.NewReader(`{"Type":"spice"}`))
	if code != http.StatusBadRequest {
		t.Fatalf("bad console type: %d %s", code, body)
	}
	code, _, body = do(t, "POST", a.url("/v1/instances/"+id+"/consoles"), strings.NewReader(`{"Type":"novnc"}`))
	if code != http.StatusOK || !strings.Contains(string(body), "/ui/console.html?path=console%2Fwebsockify%3Ftoken%3D") {
		t.Fatalf("novnc console: %d %s", code, body)
	}
	code, _, body = do(t, "GET", a.url("/v1/instances/nope/console-output"), nil)
	if code != http.StatusNotFound {
		t.Fatalf("console output of a missing instance: %d %s", code, body)
	}

	ctx := t.Context()
	compute := computeClient(t, a, "2.31")
	rc, err := remoteconsoles.Create(ctx, compute, id, remoteconsoles.CreateOpts{
		Protocol: remoteconsoles.ConsoleProtocolVNC, Type: remoteconsoles.ConsoleTypeNoVNC}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Console struct {
			InstanceUUID string `json:"instance_uuid"`
			Host         string `json:"host"`
			Port         int    `json:"port"`
		} `json:"console"`
	}
	if _, err := compute.Get(ctx, compute.ServiceURL("os-console-auth-tokens", tokenOf(t, rc.URL)), &shown, nil); err != nil {
		t.Fatalf("os-console-auth-tokens: %v", err)
	}
	if shown.Console.InstanceUUID != id || shown.Console.Host != "127.0.0.1" || shown.Console.Port == 0 {
		t.Fatalf("token shown as %+v", shown.Console)
	}
	if _, err := compute.Get(ctx, compute.ServiceURL("os-console-auth-tokens", "bogus"), &shown, nil); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("a bogus token: %v", err)
	}
	// A protocol/type mismatch is Nova's 400; so is SPICE, as in Nova
	// with [spice] disabled.
	_, err = remoteconsoles.Create(ctx, compute, id, remoteconsoles.CreateOpts{Protocol: "vnc", Type: "serial"}).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		t.Fatalf("vnc/serial: %v", err)
	}
	_, err = remoteconsoles.Create(ctx, compute, id, remoteconsoles.CreateOpts{Protocol: "spice", Type: "spice-html5"}).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "Unavailable console type spice-html5.") {
		t.Fatalf("spice: %v", err)
	}
	out2, err := servers.ShowConsoleOutput(ctx, compute, id, servers.ShowConsoleOutputOpts{Length: 1}).Extract()
	if err != nil || strings.Count(out2, "\n") > 1 {
		t.Fatalf("console output length 1: %q, %v", out2, err)
	}
}

// TestConsoleListenerAndConfig: the client's console block parses; a
// console listener of its own serves the proxies and the noVNC page, and
// console URLs start with it; a bad token_ttl stops the agent.
func TestConsoleListenerAndConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir+"/agent.hcl", `
client {
  enabled = true
  console {
    listen        = "127.0.0.1:0"
    public_url    = "https://console.example.com"
    xvpvnc_listen = "off"
    token_ttl     = "5m"
  }
}
`)
	c, err := LoadConfigFile(dir + "/agent.hcl")
	if err != nil {
		t.Fatal(err)
	}
	cc := c.Client.Console
	if cc == nil || cc.Listen != "127.0.0.1:0" || cc.PublicURL != "https://console.example.com" || cc.XVPVNCListen != "off" || cc.TokenTTL != "5m" {
		t.Fatalf("console block parsed as %+v", cc)
	}

	a := testAgent(t, func(c *Config) {
		c.Client = &ClientConfig{Console: &ConsoleConfig{Listen: "127.0.0.1:0", XVPVNCListen: "off"}}
	})
	proxy := "http://" + a.consoleLn.Addr().String()
	code, _, body := do(t, "GET", proxy+"/ui/console.html", nil)
	if code != http.StatusOK || !strings.Contains(string(body), "js/console.js") {
		t.Fatalf("noVNC page on the console listener: %d %s", code, body)
	}
	code, _, _ = do(t, "GET", proxy+"/console/websockify?token=nope", nil)
	if code != http.StatusForbidden {
		t.Fatalf("websocket proxy with a bogus token: %d", code)
	}
	var out structs.InstanceCreateResponse
	waitDevImages(t, a)
	if err := a.rpc.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "l", FlavorID: "1", ImageID: "cirros",
		ProjectID: "p1", UserID: "u1", RequestID: "req-l"}, &out); err != nil {
		t.Fatal(err)
	}
	id := out.Instances[0].ID
	waitLong(t, "fake instance ACTIVE", func() error {
		code, _, body := do(t, "POST", a.url("/v1/instances/"+id+"/consoles"), strings.NewReader(`{"Type":"novnc"}`))
		if code != http.StatusOK || !strings.Contains(string(body), `"URL": "`+proxy+"/ui/console.html?path=") &&
			!strings.Contains(string(body), `"URL":"`+proxy+"/ui/console.html?path=") {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	// xvpvnc is off.
	code, _, body = do(t, "POST", a.url("/v1/instances/"+id+"/consoles"), strings.NewReader(`{"Type":"xvpvnc"}`))
	if code != http.StatusNotImplemented {
		t.Fatalf("xvpvnc while off: %d %s", code, body)
	}

	// A bad token_ttl is refused with the configuration, before anything
	// starts.
	bad := &Config{DevMode: true, NodeName: "bad", DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Client: &ClientConfig{Console: &ConsoleConfig{TokenTTL: "forever"}}}
	if err := bad.Finalize(); err == nil || !strings.Contains(err.Error(), "token_ttl") {
		t.Fatalf("token_ttl forever: %v", err)
	}
}

// TestConsoleRequestsForwardToTheHostingAgent: an agent that does not
// host an instance forwards its console requests to the one that does,
// whose proxy the URL names; another agent's proxy refuses the token.
// The hosting agent requires tokens (ACLs on, as in production): the
// forwarded requests present the caller's.
func TestConsoleRequestsForwardToTheHostingAgent(t *testing.T) {
	t.Parallel()
	srv := testAgent(t, nil)
	zero := 0
	ccfg := &Config{NodeName: "hv2", DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Ports:  &PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
		Client: &ClientConfig{Enabled: true, RetryJoin: []string{srv.GossipAddr()}}}
	if err := ccfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	hv2, err := New(ccfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hv2.Shutdown() })
	// Only hv2's host takes new instances.
	var local string
	waitLong(t, "both hosts up", func() error {
		var out structs.HostListResponse
		if err := srv.rpc.RPC("Host.List", &structs.HostListRequest{}, &out); err != nil {
			return err
		}
		up := 0
		for _, h := range out.Hosts {
			if h.Up() {
				up++
			}
			if h.Name == "test" {
				local = h.ID
			}
		}
		if up != 2 || local == "" {
			return fmt.Errorf("%d hosts up", up)
		}
		return nil
	})
	if code, _, body := do(t, "POST", srv.url("/v1/hosts/"+local+"/disable"), strings.NewReader(`{}`)); code != http.StatusOK {
		t.Fatalf("disable the server's host: %d %s", code, body)
	}
	waitDevImages(t, srv)
	id := bootActive(t, srv, &structs.InstanceCreateRequest{Name: "fw", FlavorID: "1", ImageID: "cirros",
		ProjectID: "p1", UserID: "u1", RequestID: "req-fw"}, func(inst *structs.Instance) error {
		if inst.HostID == local {
			return fmt.Errorf("on the server's own host %s", local)
		}
		return nil
	}).ID
	admin := keystoneToken(t, srv, "admin")
	if code, _, body := call(t, "GET", srv.url("/v1/instances/"+id+"/console-output"), "", ""); code != http.StatusUnauthorized {
		t.Fatalf("forwarded without a token: %d %s", code, body)
	}
	code, _, body := call(t, "GET", srv.url("/v1/instances/"+id+"/console-output"), admin, "")
	if code != http.StatusOK || !strings.Contains(string(body), "hv2") {
		t.Fatalf("forwarded console output: %d %s", code, body)
	}
	code, _, body = call(t, "POST", srv.url("/v1/instances/"+id+"/consoles"), admin, `{"Type":"novnc"}`)
	if code != http.StatusOK || !strings.Contains(string(body), "http://"+hv2.HTTPAddr()+"/ui/console.html") {
		t.Fatalf("forwarded console: %d %s", code, body)
	}
	var rc struct{ URL string }
	if err := json.Unmarshal(body, &rc); err != nil {
		t.Fatal(err)
	}
	// The token is hv2's: the server agent's proxy refuses it.
	closedWithoutData(t, srv.HTTPAddr(), tokenOf(t, rc.URL))
	// The fake driver has no serial console, also when forwarded.
	if code, _, body := call(t, "POST", srv.url("/v1/instances/"+id+"/consoles"), admin, `{"Type":"serial"}`); code != http.StatusNotImplemented {
		t.Fatalf("forwarded serial console: %d %s", code, body)
	}
}
