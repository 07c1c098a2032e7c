package native

import (
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent/identity"
	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// MountPath is where the API is served: every path under it is the
// API's, so that an unknown one answers the API's own 404 or 405.
const MountPath = "/v1/"

// TokenVerifier verifies identity tokens (agent/identity).
type TokenVerifier interface {
	Verify(token string) (*identity.Token, error)
}

// ImageData moves image data between the API and the servers' image
// stores, with the caller's token, which the servers check.
type ImageData interface {
	// Upload streams body (size bytes, -1 when unknown) as the image's
	// data and returns the image, active once its data is stored.
	Upload(token, imageID string, size int64, body io.Reader) (*structs.Image, error)
	// Download opens length bytes (all the rest when negative) of the
	// image's data from offset.
	Download(token string, img *structs.Image, offset, length int64) (io.ReadCloser, error)
}

// Consoles answers the console and diagnostics routes (agent/console),
// on this agent or forwarded to the one that hosts the instance. The
// handlers read the path's "id" (http.Request.PathValue) and may write
// their own answers.
type Consoles interface {
	HandleOutput(w http.ResponseWriter, r *http.Request) (any, error)
	HandleOpen(w http.ResponseWriter, r *http.Request) (any, error)
	HandleDiagnostics(w http.ResponseWriter, r *http.Request) (any, error)
}

// Guests answers the guest routes (agent/guest): an instance's admin
// password and a host's uptime, forwarded like Consoles.
type Guests interface {
	HandlePassword(w http.ResponseWriter, r *http.Request) (any, error)
	HandleUptime(w http.ResponseWriter, r *http.Request) (any, error)
}

// Readiness is the daemon's own readiness: in dev mode, that the cloud
// is seeded (flavors, image, identity, networks).
type Readiness interface {
	// Ready is closed once the agent is ready.
	Ready() <-chan struct{}
	// NotReady says what the agent is still waiting for.
	NotReady() string
}

// Observer records each answered request by route template (the route's
// pattern, or "unmatched") for the agent's metrics.
type Observer interface {
	ObserveHTTP(route string, code int, d time.Duration)
}

// Members is the agent's view of the gossip pool (*gossip.Pool).
type Members interface {
	Members() []gossip.Member
	NumMembers() int
}

// AgentInfo is the agent's own configuration as GET /v1/agent/self
// shows it.
type AgentInfo struct {
	NodeName, NodeID, Region, AZ string
	Server, Client               bool
	DataDir                      string
	HTTPAddr, RPCAddr            string
	GossipAddr, Version          string
}

// Config is what the API needs of the daemon.
type Config struct {
	// RPC reaches the servers. Every call the API makes for a request
	// goes through route.AsCaller with the request's token.
	RPC route.RPC
	// Self reaches the servers with the agent's own credential, for the
	// reads it makes on its own behalf (cluster status for any token).
	Self route.RPC
	// ACLEnabled makes routes above policy.Public require a verified
	// token whose roles reach the route's level; off, every request
	// passes as an admin of no project (dev mode's open API).
	ACLEnabled bool
	// Verifier verifies tokens; nil when no identity service runs.
	Verifier TokenVerifier
	// Anonymous, when set, is who a request without a token acts as
	// while ACLs are off: dev mode's admin user and project, so that what
	// the open API creates has an owner that quotas, usage and the
	// OpenStack APIs see. It fails (kind unavailable) until that identity
	// exists. Unset, such a request acts as an admin of no project.
	Anonymous func() (*policy.Subject, error)
	// Readiness, when set, says whether the agent is ready to serve
	// (GET /v1/status/ready); unset, an agent is ready once it knows
	// a leader.
	Readiness Readiness
	// Images streams image data; Consoles and Guests serve the routes
	// about an instance's console and guest, or a host's uptime.
	Images   ImageData
	Consoles Consoles
	Guests   Guests
	// Observer records requests by route; nil records nothing.
	Observer Observer
	// Metrics, when set, is served as is at GET /v1/metrics (the
	// agent's Prometheus registry): public, and not itself observed.
	Metrics http.Handler
	// Agent is the agent's configuration; Gossip its pool; RaftStats
	// its server's Raft statistics (nil on a client-only agent).
	Agent     AgentInfo
	Gossip    Members
	RaftStats func() map[string]string
	// EnableDebug serves the Go profiler to admins (pprof.go).
	EnableDebug bool
	// Logs, when set, answers the agent's recent log lines
	// (GET /v1/agent/logs, logs.go).
	Logs func() []byte
	// WriteRetry is how long an idempotent write (a keyed create, a
	// delete) is retried across leader elections; zero sends it once.
	WriteRetry time.Duration
	Logger     hclog.Logger
}

// API is the native /v1 API. It holds no state of its own.
type API struct {
	cfg    Config
	logger hclog.Logger
	table  *route.Table[handler]
	// raw are routes served as is, outside the policy table.
	raw map[string]http.Handler
}

// New builds the API.
func New(cfg Config) *API {
	a := &API{cfg: cfg, logger: cfg.Logger, raw: map[string]http.Handler{}}
	if a.logger == nil {
		a.logger = hclog.NewNullLogger()
	}
	var raw []route.Route[handler]
	if cfg.Metrics != nil {
		raw = append(raw, route.Route[handler]{Pattern: metricsPattern, Access: policy.Public})
		a.raw[metricsPattern] = cfg.Metrics
	}
	a.table = route.MustTable(a.routes(), raw)
	return a
}

// metricsPattern is the route of the agent's Prometheus metrics.
const metricsPattern = "GET /v1/metrics"

// Handler is the API's handler, for MountPath.
func (a *API) Handler() http.Handler { return http.HandlerFunc(a.serve) }
