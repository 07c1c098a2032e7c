package cinder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent/identity"
	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// MountPath is where the agent serves the API; the catalog's volumev3
// and block-storage endpoints are <agent>/volume/v3.
const MountPath = "/volume"

// RPC reaches the servers.
type RPC interface {
	RPC(method string, args, reply any) error
}

// TokenVerifier validates a Keystone token (X-Auth-Token).
type TokenVerifier interface {
	Verify(token string) (*identity.Token, error)
}

// Config configures the API.
type Config struct {
	RPC      RPC
	Verifier TokenVerifier
	Logger   hclog.Logger
}

// API is the Block Storage API handler. It holds no state of its own.
type API struct {
	rpc      RPC
	verifier TokenVerifier
	logger   hclog.Logger
	table    *route.Table[handler]
}

// handler answers one request; it writes its own success and returns
// errors for the API to answer Cinder's way.
type handler func(q *request) error

// New builds the API from its config.
func New(cfg Config) *API {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	a := &API{rpc: cfg.RPC, verifier: cfg.Verifier, logger: logger}
	a.table = route.MustTable(a.routes())
	return a
}

// Handler returns the API's HTTP handler, to mount at MountPath and
// under it.
func (a *API) Handler() http.Handler { return http.HandlerFunc(a.serveHTTP) }

// request is one API call as the handlers see it.
type request struct {
	api       *API
	w         http.ResponseWriter
	r         *http.Request
	token     *identity.Token
	authToken string
	params    route.Params
	// version is the microversion's minor number (3.x).
	version int
	// base is the URL of /volume/v3/{project_id} for links.
	base  string
	wrote bool
}

func (q *request) param(name string) string { return q.params.Get(name) }

func (q *request) isAdmin() bool { return q.token != nil && q.token.IsAdmin() }

// project is the caller's project, which scopes every call.
func (q *request) project() string { return q.token.ProjectID }

// call makes an RPC with the caller's token, which the servers check.
func (q *request) call(method string, args, reply any) error {
	return route.AsCaller(q.api.rpc, q.authToken).RPC(method, args, reply)
}

// serveHTTP answers one request: request id, routing, token, error
// answers and panic containment.
func (a *API) serveHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := "req-" + uuid.NewString()
	w.Header().Set("X-Openstack-Request-Id", reqID)
	q := &request{api: a, w: w, r: r}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			a.logger.Error("volume api handler panic", "request_id", reqID, "path", r.URL.Path, "panic", p)
			if !q.wrote {
				a.writeError(q, errorf(http.StatusInternalServerError, msgInternal))
			}
		}
	}()
	if err := a.dispatch(q); err != nil {
		a.writeError(q, err)
	}
}

// collections are the first segments after /v3 that name a resource,
// not a project id.
var collections = map[string]bool{"volumes": true, "snapshots": true, "types": true, "os-quota-sets": true,
	"os-quota-class-sets": true, "limits": true, "os-availability-zone": true, "attachments": true}

// dispatch routes a request under MountPath. After /v3, a segment that
// is not a collection is the project id (Cinder's URLs carry it; from
// 3.67 they may leave it out); it must be the token's project unless
// the caller is an admin.
func (a *API) dispatch(q *request) error {
	rest, ok := strings.CutPrefix(q.r.URL.EscapedPath(), MountPath)
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		return errNotFound()
	}
	path := route.SplitCanonical(rest)
	urlProject := ""
	if len(path) >= 2 && path[0] == "v3" && !collections[path[1]] {
		urlProject = path[1]
		path = append([]string{"v3"}, path[2:]...)
	}
	if err := q.negotiate(); err != nil {
		return err
	}
	m, err := a.table.Match(route.Request{Method: q.r.Method, Path: path, Version: q.version, Ctx: q.r.Context()})
	var na *route.MethodNotAllowedError
	switch {
	case errors.As(err, &na):
		q.w.Header().Set("Allow", na.AllowHeader())
		return errorf(http.StatusMethodNotAllowed, "The method %s is not allowed for this resource.", q.r.Method)
	case err != nil:
		return errNotFound()
	}
	if m.Route.Access != policy.Public {
		if err := q.authenticate(); err != nil {
			return err
		}
		if urlProject != "" && urlProject != q.project() && !q.isAdmin() {
			return errorf(http.StatusBadRequest, "Malformed request url")
		}
		if !m.Route.Access.Allows(q.subject()) {
			return errorf(http.StatusForbidden, "Policy doesn't allow %s to be performed.", m.Route.Policy)
		}
	}
	q.base = requestBase(q.r) + MountPath + "/v3"
	if urlProject != "" {
		q.base += "/" + urlProject
	}
	q.params = m.Params
	return m.Route.Handle(q)
}

// subject is the caller for route access levels.
func (q *request) subject() *policy.Subject {
	return &policy.Subject{UserID: q.token.UserID, ProjectID: q.token.ProjectID, Roles: q.token.Roles}
}

// requestBase is the external URL the client reached the agent at
// (httpx.ExternalBase).
func requestBase(r *http.Request) string {
	return httpx.ExternalBase(r)
}

// authenticate verifies X-Auth-Token; Cinder needs a project-scoped
// token.
func (q *request) authenticate() error {
	raw := q.r.Header.Get("X-Auth-Token")
	if raw == "" || q.api.verifier == nil {
		return errorf(http.StatusUnauthorized, "The request you have made requires authentication.")
	}
	tok, err := q.api.verifier.Verify(raw)
	if err != nil || tok == nil {
		return errorf(http.StatusUnauthorized, "The request you have made requires authentication.")
	}
	if tok.ProjectID == "" {
		return errorf(http.StatusForbidden, "A project-scoped token is required.")
	}
	q.token, q.authToken = tok, raw
	route.ObserveCaller(q.r.Context(), tok.UserID, tok.ProjectID)
	return nil
}

// msgInternal is Cinder's message for an unexpected failure.
const msgInternal = "The server has either erred or is incapable of performing the requested operation."

// apiError is an answer with a status other than success.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) error {
	return &apiError{status: status, msg: fmt.Sprintf(format, args...)}
}

func errNotFound() error { return errorf(http.StatusNotFound, "The resource could not be found.") }

// statuses are the HTTP statuses of the servers' error kinds: a quota
// reached is Cinder's 413 overLimit.
var statuses = route.Default.With(route.Statuses{structs.KindQuotaReached: http.StatusRequestEntityTooLarge})

// faultNames are Cinder's fault names by status (cinder.api.openstack.
// wsgi.Fault); any other status is a computeFault.
var faultNames = map[int]string{
	http.StatusBadRequest: "badRequest", http.StatusUnauthorized: "unauthorized", http.StatusForbidden: "forbidden",
	http.StatusNotFound: "itemNotFound", http.StatusMethodNotAllowed: "badMethod", http.StatusConflict: "conflictingRequest",
	http.StatusRequestEntityTooLarge: "overLimit", http.StatusUnsupportedMediaType: "badMediaType",
	http.StatusNotImplemented: "notImplemented", http.StatusServiceUnavailable: "serviceUnavailable",
	http.StatusNotAcceptable: "computeFault",
}

// statusOf maps an error to Cinder's status and message.
func statusOf(err error) (int, string) {
	var e *apiError
	if errors.As(err, &e) {
		return e.status, e.msg
	}
	status, known := statuses.Of(err)
	if !known {
		return http.StatusInternalServerError, msgInternal
	}
	return status, structs.Message(err)
}

// writeError answers {"<fault>": {"message", "code"}}, as Cinder's
// fault wrapper does; a quota refusal carries Retry-After: 0.
func (a *API) writeError(q *request, err error) {
	status, msg := statusOf(err)
	if status >= 500 {
		a.logger.Error("volume api request failed", "method", q.r.Method, "path", q.r.URL.Path, "error", err)
	}
	name, ok := faultNames[status]
	if !ok {
		name = "computeFault"
	}
	if status == http.StatusRequestEntityTooLarge {
		q.w.Header().Set("Retry-After", "0")
	}
	_ = q.json(status, map[string]any{name: map[string]any{"message": msg, "code": status}})
}

// json answers status with body as JSON.
func (q *request) json(status int, body any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return err
	}
	h := q.w.Header()
	h.Set("Content-Type", "application/json")
	q.versionHeaders()
	q.wrote = true
	q.w.WriteHeader(status)
	if q.r.Method != http.MethodHead {
		_, _ = q.w.Write(bytes.TrimRight(buf.Bytes(), "\n"))
	}
	return nil
}

// empty answers status without a body.
func (q *request) empty(status int) error {
	q.versionHeaders()
	q.wrote = true
	q.w.WriteHeader(status)
	return nil
}

// maxBody bounds request bodies.
const maxBody = 1 << 20

// decode reads the JSON body into out; a missing or broken body is
// Cinder's 400.
func (q *request) decode(out any) error {
	raw, err := io.ReadAll(io.LimitReader(q.r.Body, maxBody+1))
	if err != nil {
		return errorf(http.StatusBadRequest, "Malformed request body")
	}
	if len(raw) > maxBody {
		return errorf(http.StatusRequestEntityTooLarge, "Request is too large.")
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return errorf(http.StatusBadRequest, "Malformed request body")
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return errorf(http.StatusBadRequest, "Malformed request body")
	}
	return nil
}
