package nova

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/agent/console"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// Consoles serves what the API cannot answer from the servers alone: an
// instance's console output and remote console URLs, which need the
// agent that hosts it (agent/console).
type Consoles interface {
	Output(ctx context.Context, instanceID string, lines int) (string, error)
	Open(ctx context.Context, instanceID, consoleType string) (*console.Remote, error)
}

// SetConsoles gives the API its console service; without one the
// console calls answer 501.
func (a *API) SetConsoles(c Consoles) { a.consoles = c }

// Nova's policy rules of consoles.
const (
	consoleOutputRule  = "os_compute_api:os-console-output"
	remoteConsolesRule = "os_compute_api:os-remote-consoles"
	consoleTokensRule  = "os_compute_api:os-console-auth-tokens"
)

// consoleRoutes are remote consoles (2.6+) and the admin's look-up of a
// console token.
func (a *API) consoleRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "POST /servers/{id}/remote-consoles", MinVersion: 6, Access: reader, Policy: remoteConsolesRule, Handle: a.remoteConsoleCreate},
		{Pattern: "GET /os-console-auth-tokens/{token}", Access: admin, Policy: consoleTokensRule, Handle: a.consoleTokenShow},
	}
}

// consoleTypesV26 are the console types of remote-consoles' schema
// (create_v26); 2.8 adds webmks.
var consoleTypesV26 = []string{"novnc", "xvpvnc", "rdp-html5", "spice-html5", "serial"}

func remoteConsoleSchema(mv int) *schema {
	protocols := []string{"vnc", "spice", "rdp", "serial"}
	types := consoleTypesV26
	if mv >= 8 {
		protocols = append(protocols, "mks")
		types = append(append([]string(nil), types...), "webmks")
	}
	if mv >= 99 {
		types = append(types, "spice-direct")
	}
	return &schema{types: tObject, required: []string{"remote_console"}, props: map[string]*schema{
		"remote_console": {types: tObject, required: []string{"protocol", "type"}, props: map[string]*schema{
			"protocol": {types: tString, enum: protocols},
			"type":     {types: tString, enum: types},
		}},
	}}
}

// remoteConsoleCreate answers POST /servers/{id}/remote-consoles.
func (a *API) remoteConsoleCreate(q *request) (*reply, error) {
	body, err := decodeBody(q, remoteConsoleSchema(q.mv))
	if err != nil {
		return nil, err
	}
	rc := object(body, "remote_console")
	protocol, _ := stringOf(rc, "protocol")
	consoleType, _ := stringOf(rc, "type")
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if !q.isMember() {
		return nil, policyFault(remoteConsolesRule)
	}
	url, err := a.openConsole(q, inst, protocol, consoleType)
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"remote_console": map[string]any{"protocol": protocol, "type": consoleType, "url": url}})
}

// openConsole asks the hosting agent for a console: Nova's handlers by
// protocol, each accepting its own types ("Invalid console type" for
// another). SPICE and MKS answer as Nova with [spice]/[mks] disabled
// (Stratus has no proxy for either), RDP as Nova since it dropped
// Hyper-V: "Unavailable console type", 400.
func (a *API) openConsole(q *request, inst *structs.Instance, protocol, consoleType string) (string, error) {
	switch protocol {
	case "vnc":
		if consoleType != structs.ConsoleTypeNoVNC && consoleType != structs.ConsoleTypeXVPVNC {
			return "", badRequest("Invalid console type %s", consoleType)
		}
	case "serial":
		if consoleType != structs.ConsoleTypeSerial {
			return "", badRequest("Invalid console type %s", consoleType)
		}
	case "spice", "mks":
		return "", badRequest("Unavailable console type %s.", consoleType)
	case "rdp":
		return "", badRequest("Unavailable console type rdp.")
	default:
		return "", notSupported()
	}
	if a.consoles == nil {
		return "", notSupported()
	}
	rc, err := a.consoles.Open(q.r.Context(), inst.ID, consoleType)
	if err != nil {
		return "", consoleFault(err, inst.ID)
	}
	return noVNCLiteURL(rc.URL), nil
}

// noVNCLiteURL points a noVNC console URL at noVNC's own page
// (vnc_lite.html) rather than the web UI's, as Nova's URLs open the page
// its novncproxy serves; its ?path= (the websocket and token) is kept.
// Other URLs are returned as they are.
func noVNCLiteURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !strings.HasSuffix(u.Path, console.NoVNCPage) {
		return raw
	}
	u.Path = strings.TrimSuffix(u.Path, console.NoVNCPage) + console.NoVNCLitePage
	u.RawPath = ""
	return u.String()
}

// consoleFault words a console error as Nova does.
func consoleFault(err error, id string) error {
	switch {
	case console.IsNotSupported(err):
		return notSupported()
	case console.IsNotReady(err):
		return faultf(http.StatusConflict, "Instance %s is not ready", id)
	case structs.KindOf(err) == structs.KindNotFound:
		return notFoundAs(err, "Instance %s could not be found.", id)
	}
	return err
}

var (
	vncConsoleSchema = &schema{types: tObject, required: []string{"type"}, props: map[string]*schema{
		"type": {types: tString, enum: []string{"novnc", "xvpvnc"}},
	}}
	serialConsoleSchema = &schema{types: tObject, required: []string{"type"}, props: map[string]*schema{
		"type": {types: tString, enum: []string{"serial"}},
	}}
	spiceConsoleSchema = &schema{types: tObject, required: []string{"type"}, props: map[string]*schema{
		"type": {types: tString, enum: []string{"spice-html5"}},
	}}
	consoleOutputSchema = &schema{types: tObject, props: map[string]*schema{
		"length": {types: tInteger | tString | tNull, pattern: regexp.MustCompile(`^-?[0-9]+$`), min: ptr(-1)},
	}}
)

// consoleActions are the console actions of POST /servers/{id}/action;
// server_actions.go puts them in its table. The get*Console actions end
// at 2.5, where remote-consoles replaces them.
func consoleActions() map[string]*serverActionSpec {
	return map[string]*serverActionSpec{
		"os-getConsoleOutput": {rule: consoleOutputRule, schema: func(int) *schema { return consoleOutputSchema }, do: actConsoleOutput},
		"os-getVNCConsole": {rule: remoteConsolesRule, schema: func(int) *schema { return vncConsoleSchema },
			do: untilVersion(5, actRemoteConsole("vnc"))},
		"os-getSerialConsole": {rule: remoteConsolesRule, schema: func(int) *schema { return serialConsoleSchema },
			do: untilVersion(5, actRemoteConsole("serial"))},
		"os-getSPICEConsole": {rule: remoteConsolesRule, schema: func(int) *schema { return spiceConsoleSchema },
			do: untilVersion(5, actRemoteConsole("spice"))},
		// Removed with Hyper-V in Nova 29.0.0: 410 whatever the body.
		"os-getRDPConsole": {rule: remoteConsolesRule, schema: func(int) *schema { return anyBody },
			do: func(*request, *structs.Instance, any) (*reply, error) { return nil, faultf(http.StatusGone, msgGone) }},
	}
}

// actRemoteConsole answers os-getVNCConsole and os-getSerialConsole:
// {"console": {"type": …, "url": …}}.
func actRemoteConsole(protocol string) func(*request, *structs.Instance, any) (*reply, error) {
	return func(q *request, inst *structs.Instance, arg any) (*reply, error) {
		consoleType, _ := stringOf(arg.(map[string]any), "type")
		url, err := q.api.openConsole(q, inst, protocol, consoleType)
		if err != nil {
			return nil, err
		}
		return okReply(map[string]any{"console": map[string]any{"type": consoleType, "url": url}})
	}
}

// controlChars are what Nova strips from console output.
var controlChars = regexp.MustCompile("[\x00-\x08\x0B-\x1F]")

// actConsoleOutput answers os-getConsoleOutput: the whole console log,
// or its tail as Nova's compute manager cuts it (see tailLog), for any
// server on a host, running or not.
func actConsoleOutput(q *request, inst *structs.Instance, arg any) (*reply, error) {
	length, tail := arg.(map[string]any)["length"]
	tail = tail && length != nil
	if q.api.consoles == nil {
		return nil, notSupported()
	}
	if tail && intOf(length) == 0 {
		return okReply(map[string]any{"output": ""})
	}
	out, err := q.api.consoles.Output(q.r.Context(), inst.ID, 0)
	if err != nil {
		return nil, consoleFault(err, inst.ID)
	}
	if tail {
		out = tailLog(out, int(intOf(length)))
	}
	return okReply(map[string]any{"output": controlChars.ReplaceAllString(out, "")})
}

// tailLog is Nova's _tail_log: the last length pieces of the log split
// at newlines, joined again. A log ending in a newline counts the empty
// piece after it, so the answer always splits into exactly length
// pieces (what tempest checks); -1 is Python's [1:], all but the first.
func tailLog(log string, length int) string {
	pieces := strings.Split(log, "\n")
	from := len(pieces) - length
	if length < 0 {
		from = -length
	}
	from = max(0, min(from, len(pieces)))
	return strings.Join(pieces[from:], "\n")
}

// consoleTokenShow answers GET /os-console-auth-tokens/{token}: where the
// token's console listens. Before 2.31 only RDP tokens could be shown,
// and Nova, which has none since its HyperV driver went, answers those
// versions a bare 400 before it looks. 2.99 refuses unknown query
// parameters, and adds tls_port for spice-direct tokens, which Stratus
// does not issue (it has no SPICE proxy).
func (a *API) consoleTokenShow(q *request) (*reply, error) {
	if q.atLeast(99) {
		if err := q.checkQuery(); err != nil {
			return nil, err
		}
	}
	if !q.atLeast(31) {
		return nil, badRequest(msgBadRequest)
	}
	token := q.param("token")
	var out structs.ConsoleTokenResponse
	if err := q.call("Console.Get", &structs.ConsoleTokenRequest{Token: token}, &out); err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			return nil, notFound("Token not found")
		}
		return nil, err
	}
	tok := out.Token
	var host string
	var port, path any
	if h, p, err := net.SplitHostPort(tok.Target); err == nil && !strings.HasPrefix(tok.Target, "/") {
		n, _ := strconv.Atoi(p)
		host, port = h, n
	} else {
		host, path = tok.HostID, tok.Target
	}
	return okReply(map[string]any{"console": map[string]any{
		"instance_uuid": tok.InstanceID, "host": host, "port": port, "internal_access_path": path,
	}})
}
