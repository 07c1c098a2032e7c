package nova

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent/identity"
	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/internal/route"
)

// MountPath is where the agent serves the API, as devstack does; the
// catalog's compute endpoint is <agent>/compute/v2.1.
const MountPath = "/compute"

// RPC reaches the servers; the agent's in-process server or its
// connection pool satisfies it.
type RPC interface {
	RPC(method string, args, reply any) error
}

// TokenVerifier validates a Keystone token (X-Auth-Token). Errors of kind
// structs.KindPermission mean the token is invalid or expired.
type TokenVerifier interface {
	Verify(token string) (*identity.Token, error)
}

// ServerMember is one control-plane server as the agent sees it, shown
// by os-services and os-availability-zone as nova-scheduler and
// nova-conductor.
type ServerMember struct {
	Name  string
	Alive bool
}

// Config configures the API.
type Config struct {
	RPC      RPC
	Verifier TokenVerifier
	Logger   hclog.Logger
	// Servers lists the control-plane servers; nil leaves them out of
	// os-services and the availability zone detail.
	Servers func() []ServerMember
	// WriteRetry is how long an idempotent write (a boot with its
	// idempotency key, a delete) is retried across leader elections
	// (internal/retry); zero sends it once.
	WriteRetry time.Duration
}

// API is the Compute API handler. It holds no state of its own.
type API struct {
	rpc        RPC
	verifier   TokenVerifier
	logger     hclog.Logger
	servers    func() []ServerMember
	writeRetry time.Duration
	// consoles serves console output and remote consoles (consoles.go).
	consoles Consoles
	// guests sets passwords in guests and reads hosts' uptime
	// (server_guest.go).
	guests Guests
	// table routes every request under /v2.1.
	table *route.Table[handler]
}

// New builds the API from its config.
func New(cfg Config) *API {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	servers := cfg.Servers
	if servers == nil {
		servers = func() []ServerMember { return nil }
	}
	a := &API{rpc: cfg.RPC, verifier: cfg.Verifier, logger: logger, servers: servers, writeRetry: cfg.WriteRetry}
	a.table = a.routeTable()
	return a
}

// Handler returns the API's HTTP handler, to mount under MountPath.
func (a *API) Handler() http.Handler { return http.HandlerFunc(a.serveHTTP) }

func (a *API) serveHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := "req-" + uuid.NewString()
	w.Header().Set("X-OpenStack-Request-ID", reqID)
	w.Header().Set("X-Compute-Request-ID", reqID)
	q := &request{api: a, w: w, r: r, id: reqID, mv: minMicroversion, base: baseURL(r)}
	defer func() {
		if p := recover(); p != nil {
			a.logger.Error("compute api handler panic", "request_id", reqID, "method", r.Method, "path", r.URL.Path, "panic", p)
			a.write(q, nil, faultf(http.StatusInternalServerError, msgUnexpected))
		}
	}()
	rep, err := a.dispatch(q)
	a.write(q, rep, err)
}

// write sends a reply or an error as Nova's fault body.
func (a *API) write(q *request, rep *reply, err error) {
	h := q.w.Header()
	h.Set("Content-Type", "application/json")
	if err != nil {
		status, msg := statusOf(err)
		if status >= 500 {
			a.logger.Error("compute api request failed", "request_id", q.id, "method", q.r.Method, "path", q.r.URL.Path, "error", err)
		}
		if status == http.StatusMethodNotAllowed {
			h.Set("Allow", q.allow)
		}
		rep = &reply{status: status, body: faultBody(status, msg)}
	}
	for k, v := range rep.header {
		h[k] = v
	}
	var body []byte
	if rep.body != nil {
		je := jsonEncoders.Get()
		defer je.Release()
		if err := je.Enc.Encode(rep.body); err != nil {
			a.logger.Error("encode compute api response", "request_id", q.id, "error", err)
			rep.status = http.StatusInternalServerError
			je.Buf.Reset()
			_ = json.NewEncoder(&je.Buf).Encode(faultBody(http.StatusInternalServerError, msgUnexpected))
		}
		body = bytes.TrimRight(je.Buf.Bytes(), "\n")
	}
	q.w.WriteHeader(rep.status)
	if len(body) > 0 && q.r.Method != http.MethodHead {
		_, _ = q.w.Write(body)
	}
}

// jsonEncoders pools the encoders of this API's answers.
var jsonEncoders = httpx.NewJSONPool(func(e *json.Encoder) { e.SetEscapeHTML(false) })

// baseURL is the external URL the client reached the agent at (a
// trusted proxy's or the public_url, httpx.ExternalBase), plus
// MountPath: the root of every link.
func baseURL(r *http.Request) string {
	return httpx.ExternalBase(r) + MountPath
}
