package nova

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/agent/console"
	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// newConsoleHarness is a real server with one fake hypervisor agent whose
// driver the API's console service uses as its local host.
func newConsoleHarness(t *testing.T) *harness {
	t.Helper()
	h, s := newRealHarness(t)
	drv := fake.New(fake.Config{HostName: "hv-con"})
	// Waiting for the host to be up keeps the first boot from racing
	// its registration ("0/0 hosts").
	c := runFakeAgent(t, s, client.Config{NodeName: "hv-con", Driver: drv}, nil)
	svc := console.New(console.Config{RPC: s, PublicURL: "http://console.example:6080", XVPVNCAddr: "console.example:6081",
		Local: func(hostID string) virt.Driver {
			if hostID != "" && hostID == c.HostID() {
				return drv
			}
			return nil
		}})
	t.Cleanup(func() { _ = svc.Close() })
	h.api.SetConsoles(svc)
	return h
}

// TestConsoleAPIs checks the console calls' shapes against Nova's samples,
// their microversion limits, policy and errors, over a real server and
// a fake hypervisor.
func TestConsoleAPIs(t *testing.T) {
	h := newConsoleHarness(t)
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")

	// os-getConsoleOutput: Nova's sample shape, length as a number or a
	// numeric string; bad lengths are 400.
	out := act(h, id, memberTok, "", sample(t, "os-console-output/console-output-post-req.json")).expect(t, 200)
	sameKeys(t, "console output", out.body, sample(t, "os-console-output/console-output-post-resp.json"))
	if o := out.body["output"].(string); !strings.Contains(o, "login:") {
		t.Fatalf("console output %q", o)
	}
	// Nova's tail counts the empty piece after the log's last newline.
	two := act(h, id, memberTok, "", `{"os-getConsoleOutput": {"length": "2"}}`).expect(t, 200).body["output"].(string)
	if strings.Count(two, "\n") != 1 || !strings.HasSuffix(two, " login:\n") {
		t.Fatalf("two pieces of console output: %q", two)
	}
	act(h, id, memberTok, "", `{"os-getConsoleOutput": {"length": -2}}`).expect(t, 400)
	act(h, id, memberTok, "", `{"os-getConsoleOutput": {"length": "x"}}`).expect(t, 400)
	act(h, id, memberTok, "", `{"os-getConsoleOutput": {"lines": 1}}`).expect(t, 400)
	act(h, id, otherTok, "", `{"os-getConsoleOutput": {}}`).expect(t, 404)

	// os-getVNCConsole (until 2.5): {"console": {type, url}}.
	vnc := act(h, id, memberTok, "2.5", sample(t, "os-remote-consoles/get-vnc-console-post-req.json")).expect(t, 200)
	sameKeys(t, "vnc console", vnc.obj("console"), sample(t, "os-remote-consoles/get-vnc-console-post-resp.json")["console"].(map[string]any))
	u := vnc.obj("console")["url"].(string)
	if !strings.HasPrefix(u, "http://console.example:6080/ui/vendor/novnc/vnc_lite.html?path=console%2Fwebsockify%3Ftoken%3D") {
		t.Fatalf("novnc url %s", u)
	}
	act(h, id, memberTok, "2.6", `{"os-getVNCConsole": {"type": "novnc"}}`).expect(t, 404)
	act(h, id, memberTok, "2.5", `{"os-getVNCConsole": {"type": "spice-html5"}}`).expect(t, 400)
	// The fake driver has no serial console: Nova's 501.
	act(h, id, memberTok, "2.1", `{"os-getSerialConsole": {"type": "serial"}}`).fault(t, 501, "notImplemented", "not supported")
	// SPICE as Nova with [spice] disabled; RDP removed with Hyper-V.
	act(h, id, memberTok, "2.1", `{"os-getSPICEConsole": {"type": "spice-html5"}}`).fault(t, 400, "badRequest", "Unavailable console type spice-html5.")
	act(h, id, memberTok, "2.1", `{"os-getSPICEConsole": {"type": "novnc"}}`).fault(t, 400, "badRequest", "is not one of")
	act(h, id, memberTok, "2.6", `{"os-getSPICEConsole": {"type": "spice-html5"}}`).expect(t, 404)
	act(h, id, memberTok, "2.1", `{"os-getRDPConsole": {"type": "rdp-html5"}}`).expect(t, 410)

	// remote-consoles (2.6+): {"remote_console": {protocol, type, url}}.
	h.req("POST", "/compute/v2.1/servers/"+id+"/remote-consoles", memberTok, "2.5",
		sample(t, "os-remote-consoles/v2.6/create-vnc-console-req.json")).expect(t, 404)
	rc := h.req("POST", "/compute/v2.1/servers/"+id+"/remote-consoles", memberTok, "2.6",
		sample(t, "os-remote-consoles/v2.6/create-vnc-console-req.json")).expect(t, 200)
	sameKeys(t, "remote console", rc.body, sample(t, "os-remote-consoles/v2.6/create-vnc-console-resp.json"))
	xvp := h.req("POST", "/compute/v2.1/servers/"+id+"/remote-consoles", memberTok, "2.6",
		`{"remote_console": {"protocol": "vnc", "type": "xvpvnc"}}`).expect(t, 200).obj("remote_console")
	if !strings.HasPrefix(xvp["url"].(string), "http://console.example:6081/console?token=") {
		t.Fatalf("xvpvnc console %v", xvp)
	}
	for body, status := range map[string]int{
		`{"remote_console": {"protocol": "vnc", "type": "serial"}}`:        400,
		`{"remote_console": {"protocol": "vnc", "type": "webmks"}}`:        400, // webmks is 2.8+
		`{"remote_console": {"protocol": "vnc"}}`:                          400,
		`{"remote_console": {"protocol": "vnc", "type": "novnc", "x": 1}}`: 400,
		`{"remote_console": {"protocol": "rdp", "type": "rdp-html5"}}`:     400,
	} {
		h.req("POST", "/compute/v2.1/servers/"+id+"/remote-consoles", memberTok, "2.6", body).expect(t, status)
	}
	h.req("POST", "/compute/v2.1/servers/"+id+"/remote-consoles", memberTok, "2.8",
		sample(t, "os-remote-consoles/v2.8/create-mks-console-req.json")).fault(t, 400, "badRequest", "Unavailable console type webmks.")
	// spice-direct is a type from 2.99; Stratus has no SPICE proxy, so
	// it answers as Nova with [spice] disabled.
	spiceDirect := `{"remote_console": {"protocol": "spice", "type": "spice-direct"}}`
	h.req("POST", "/compute/v2.1/servers/"+id+"/remote-consoles", memberTok, "2.98", spiceDirect).
		fault(t, 400, "badRequest", "'spice-direct' is not one of")
	h.req("POST", "/compute/v2.1/servers/"+id+"/remote-consoles", memberTok, "2.99", spiceDirect).fault(t, 400, "badRequest", "Unavailable console type spice-direct.")
	h.req("POST", "/compute/v2.1/servers/"+id+"/remote-consoles", readerTok, "2.6",
		sample(t, "os-remote-consoles/v2.6/create-vnc-console-req.json")).fault(t, 403, "forbidden", "os_compute_api:os-remote-consoles")
	h.req("POST", "/compute/v2.1/servers/"+id+"/remote-consoles", otherTok, "2.6",
		sample(t, "os-remote-consoles/v2.6/create-vnc-console-req.json")).expect(t, 404)

	// os-console-auth-tokens: admin only, all types from 2.31.
	parsed, err := url.Parse(rc.obj("remote_console")["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	inner, _ := url.Parse("/" + parsed.Query().Get("path"))
	token := inner.Query().Get("token")
	show := h.req("GET", "/compute/v2.1/os-console-auth-tokens/"+token, adminTok, "2.31", nil).expect(t, 200)
	sameKeys(t, "console token", show.obj("console"),
		sample(t, "os-console-auth-tokens/v2.31/get-console-connect-info-get-resp.json")["console"].(map[string]any))
	if c := show.obj("console"); c["instance_uuid"] != id || c["host"] != "127.0.0.1" {
		t.Fatalf("token shows %v", c)
	}
	h.req("GET", "/compute/v2.1/os-console-auth-tokens/"+token, adminTok, "2.30", nil).fault(t, 400, "badRequest", msgBadRequest)
	h.req("GET", "/compute/v2.1/os-console-auth-tokens/nope", adminTok, "2.30", nil).fault(t, 400, "badRequest", msgBadRequest)
	// 2.99 refuses unknown query parameters; spice-direct's tls_port
	// never shows, since Stratus issues no SPICE token.
	h.req("GET", "/compute/v2.1/os-console-auth-tokens/"+token+"?x=1", adminTok, "2.98", nil).expect(t, 200)
	h.req("GET", "/compute/v2.1/os-console-auth-tokens/"+token+"?x=1", adminTok, "2.99", nil).
		fault(t, 400, "badRequest", "Additional properties are not allowed ('x' was unexpected)")
	if c := h.req("GET", "/compute/v2.1/os-console-auth-tokens/"+token, adminTok, "2.99", nil).expect(t, 200).obj("console"); len(c) != 4 {
		t.Fatalf("2.99 console %v", c)
	}
	h.req("GET", "/compute/v2.1/os-console-auth-tokens/"+token, memberTok, "2.31", nil).expect(t, 403)
	h.req("GET", "/compute/v2.1/os-console-auth-tokens/nope", adminTok, "2.31", nil).fault(t, 404, "itemNotFound", "Token not found")
}
