package console

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// TypeNotSupported is the structs.Error Type of a console the host's
// driver cannot offer; the Compute API answers it 501.
const TypeNotSupported = "ConsoleTypeUnavailable"

// TypeNotReady is the structs.Error Type of an instance that has no
// console right now (not on a host, or not running): Nova's 409
// InstanceNotReady.
const TypeNotReady = "InstanceNotReady"

// RPC reaches the servers.
type RPC interface {
	RPC(method string, args, reply any) error
}

// Config configures the console service of one agent.
type Config struct {
	RPC RPC
	// Local returns the virt driver of a host this agent runs, or nil
	// when the host is another agent's.
	Local func(hostID string) virt.Driver
	// AgentAddr returns the HTTP address (host:port) of the agent that
	// is the named gossip member, for forwarding.
	AgentAddr func(gossipMember string) (string, bool)
	// PublicURL is the base URL browsers reach this agent's websocket
	// proxy at ("http://203.0.113.5:8774"); console URLs start with it.
	PublicURL string
	// XVPVNCAddr is the host:port non-browser VNC clients reach this
	// agent's xvpvnc proxy at ("" when it is off).
	XVPVNCAddr string
	// TokenTTL is how long a console token lasts (default 10 minutes).
	TokenTTL time.Duration
	Logger   hclog.Logger
	// Client makes the forwarded requests (default: 30 s timeout).
	Client *http.Client
	// Scheme is how the agents' HTTP ports are reached: "http" (the
	// default) or "https" (tls { http = true }).
	Scheme string
}

// Service answers console requests for the instances of the cluster:
// the ones this agent hosts itself, the others by forwarding.
type Service struct {
	cfg    Config
	logger hclog.Logger
	client *http.Client

	once  sync.Once
	proxy *proxyState
}

// New builds a console service.
func New(cfg Config) *Service {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = structs.ConsoleTokenTTL
	}
	if cfg.Local == nil {
		cfg.Local = func(string) virt.Driver { return nil }
	}
	client := cfg.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if cfg.Scheme == "" {
		cfg.Scheme = "http"
	}
	return &Service{cfg: cfg, logger: logger, client: client}
}

// Remote is a console a client may connect to once, with its token.
type Remote struct {
	Type     string
	Protocol string
	URL      string
	// Token is the one-time token inside URL.
	Token     string
	ExpiresAt int64
}

// placement is where an instance's console is served.
type placement struct {
	inst   *structs.Instance
	driver virt.Driver // set when this agent hosts it
	addr   string      // the hosting agent's HTTP address otherwise
}

// locate finds the agent that hosts an instance.
func (s *Service) locate(ctx context.Context, instanceID string) (*placement, error) {
	var out structs.SingleInstanceResponse
	// The caller's token, which may read the instance (the agent's own
	// credential reads only its own hosts' instances).
	args := structs.InstanceSpecificRequest{InstanceID: instanceID}
	args.AuthToken = httpx.Token(ctx)
	if err := s.cfg.RPC.RPC("Instance.Get", &args, &out); err != nil {
		return nil, err
	}
	if out.Instance == nil {
		return nil, structs.Errorf(structs.KindNotFound, "instance %s not found", instanceID)
	}
	inst := out.Instance
	if inst.HostID == "" {
		return nil, notReady("instance %s is not on a host", instanceID)
	}
	if drv := s.cfg.Local(inst.HostID); drv != nil {
		return &placement{inst: inst, driver: drv}, nil
	}
	var host structs.SingleHostResponse
	if err := s.cfg.RPC.RPC("Host.Get", &structs.HostSpecificRequest{HostID: inst.HostID}, &host); err != nil {
		return nil, err
	}
	if host.Host == nil {
		return nil, notReady("host %s of instance %s is unknown", inst.HostID, instanceID)
	}
	addr, ok := "", false
	if s.cfg.AgentAddr != nil {
		addr, ok = s.cfg.AgentAddr(host.Host.GossipMember)
	}
	if !ok || addr == "" {
		return nil, structs.Errorf(structs.KindUnavailable, "the agent of host %s (%s) is not reachable", host.Host.Name, host.Host.GossipMember)
	}
	return &placement{inst: inst, addr: addr}, nil
}

// Output returns the end of an instance's console log; lines > 0 keeps
// only the last lines.
func (s *Service) Output(ctx context.Context, instanceID string, lines int) (string, error) {
	p, err := s.locate(ctx, instanceID)
	if err != nil {
		return "", err
	}
	if p.driver == nil {
		return s.forwardOutput(ctx, p.addr, instanceID, lines)
	}
	return s.localOutput(ctx, p.driver, instanceID, lines)
}

func (s *Service) localOutput(ctx context.Context, drv virt.Driver, instanceID string, lines int) (string, error) {
	co, ok := drv.(virt.ConsoleOutputer)
	if !ok || !drv.Capabilities().ConsoleOutput {
		return "", notSupported("the %s driver has no console output", drv.Name())
	}
	out, err := co.ConsoleOutput(ctx, instanceID, lines)
	if err != nil {
		return "", driverError(err, instanceID)
	}
	return out, nil
}

// Open authorizes a console of an instance and returns its URL.
func (s *Service) Open(ctx context.Context, instanceID, consoleType string) (*Remote, error) {
	if !structs.ValidConsoleType(consoleType) {
		return nil, structs.Errorf(structs.KindInvalid, "Invalid console type %s", consoleType)
	}
	p, err := s.locate(ctx, instanceID)
	if err != nil {
		return nil, err
	}
	if p.driver == nil {
		return s.forwardOpen(ctx, p.addr, instanceID, consoleType)
	}
	return s.localOpen(ctx, p, consoleType)
}

func (s *Service) localOpen(ctx context.Context, p *placement, consoleType string) (*Remote, error) {
	rc, ok := p.driver.(virt.RemoteConsoler)
	if !ok || !p.driver.Capabilities().RemoteConsole {
		return nil, notSupported("the %s driver has no remote consoles", p.driver.Name())
	}
	if consoleType == structs.ConsoleTypeXVPVNC && s.cfg.XVPVNCAddr == "" {
		return nil, notSupported("the xvpvnc proxy is not enabled on this agent")
	}
	kind := structs.ConsoleProtocol(consoleType)
	c, err := rc.RemoteConsole(ctx, p.inst.ID, kind)
	if err != nil {
		return nil, driverError(err, p.inst.ID)
	}
	target := c.Path
	if target == "" {
		target = net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	}
	var tok structs.ConsoleAuthorizeResponse
	err = s.cfg.RPC.RPC("Console.Authorize", &structs.ConsoleAuthorizeRequest{InstanceID: p.inst.ID,
		ConsoleType: consoleType, HostID: p.inst.HostID, Target: target, TTL: s.cfg.TokenTTL}, &tok)
	if err != nil {
		return nil, err
	}
	return &Remote{Type: consoleType, Protocol: structs.ConsoleProtocol(consoleType),
		URL: s.consoleURL(consoleType, tok.Token), Token: tok.Token, ExpiresAt: tok.ExpiresAt}, nil
}

// Paths of the websocket proxy and the noVNC page, under PublicURL.
const (
	VNCPath    = "/console/websockify"
	SerialPath = "/console/serial"
	// NoVNCPage is the web UI's noVNC page; its path parameter is the
	// websocket path, as noVNC's own pages take it.
	NoVNCPage = "/ui/console.html"
	// NoVNCLitePage is noVNC's own page (vnc_lite.html, served with the
	// UI's vendored noVNC), which takes the same path parameter: the
	// Compute API hands it out, as Nova's novncproxy_base_url does.
	NoVNCLitePage = "/ui/vendor/novnc/vnc_lite.html"
)

// consoleURL is the URL a client opens for a console type: Nova's shapes
// (a noVNC page with ?path=…token…, a ws:// URL with ?token=, the
// xvpvnc proxy's /console?token=).
func (s *Service) consoleURL(consoleType, token string) string {
	q := url.QueryEscape(token)
	switch consoleType {
	case structs.ConsoleTypeSerial:
		base := s.cfg.PublicURL
		if rest, ok := strings.CutPrefix(base, "https://"); ok {
			base = "wss://" + rest
		} else if rest, ok := strings.CutPrefix(base, "http://"); ok {
			base = "ws://" + rest
		}
		return base + SerialPath + "?token=" + q
	case structs.ConsoleTypeXVPVNC:
		return "http://" + s.cfg.XVPVNCAddr + "/console?token=" + q
	default:
		path := strings.TrimPrefix(VNCPath, "/") + "?token=" + q
		return s.cfg.PublicURL + NoVNCPage + "?path=" + url.QueryEscape(path)
	}
}

// driverError turns a driver's error into a kind the edges map.
func driverError(err error, instanceID string) error {
	switch {
	case errors.Is(err, virt.ErrNotFound):
		return notReady("instance %s is not on its host's hypervisor", instanceID)
	case errors.Is(err, virt.ErrNotSupported):
		return notSupported("%v", err)
	case errors.Is(err, virt.ErrInvalidState):
		return notReady("Instance %s is not ready: %v", instanceID, err)
	}
	return fmt.Errorf("console of instance %s: %w", instanceID, err)
}

func notSupported(format string, args ...any) error {
	return &structs.Error{Kind: structs.KindInvalid, Type: TypeNotSupported, Msg: fmt.Sprintf(format, args...)}
}

func notReady(format string, args ...any) error {
	return &structs.Error{Kind: structs.KindConflict, Type: TypeNotReady, Msg: fmt.Sprintf(format, args...)}
}

// IsNotSupported reports whether err says the console cannot be offered.
func IsNotSupported(err error) bool { return errorType(err) == TypeNotSupported }

// IsNotReady reports whether err says the instance has no console now.
func IsNotReady(err error) bool { return errorType(err) == TypeNotReady }

func errorType(err error) string {
	var e *structs.Error
	if errors.As(err, &e) {
		return e.Type
	}
	return ""
}
