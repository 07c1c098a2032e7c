package neutron

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
	"github.com/stratus-cloud/stratus/structs"
)

// MountPath is where the agent serves the API; the catalog's network
// endpoint is <agent>/network, unversioned as Neutron's is.
const MountPath = "/network"

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

// API is the Networking API handler. It holds no state of its own.
type API struct {
	rpc      RPC
	verifier TokenVerifier
	logger   hclog.Logger
	table    *route.Table[handler]
}

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
	api    *API
	w      http.ResponseWriter
	r      *http.Request
	id     string
	params map[string]string
	// token is the caller's verified token; authToken its raw form.
	token     *identity.Token
	authToken string
}

// reply is a handler's answer.
type reply struct {
	status int
	body   any
}

func okReply(body any) (*reply, error) { return &reply{status: http.StatusOK, body: body}, nil }
func createdReply(body any) (*reply, error) {
	return &reply{status: http.StatusCreated, body: body}, nil
}
func noContent() (*reply, error) { return &reply{status: http.StatusNoContent}, nil }

func (q *request) param(name string) string { return q.params[name] }

func (q *request) isAdmin() bool { return q.token != nil && q.token.IsAdmin() }

// caller is who asks, for the servers' policy.
func (q *request) caller() structs.NetCaller {
	return structs.NetCaller{ProjectID: q.token.ProjectID, Admin: q.isAdmin()}
}

// call makes an RPC on the caller's behalf: the request carries the
// caller's token, which the servers check.
func (q *request) call(method string, args, out any) error {
	return route.AsCaller(q.api.rpc, q.authToken).RPC(method, args, out)
}

// base is the external URL the client reached the agent at
// (httpx.ExternalBase), plus MountPath.
func (q *request) base() string {
	return httpx.ExternalBase(q.r) + MountPath
}

func (a *API) serveHTTP(w http.ResponseWriter, r *http.Request) {
	q := &request{api: a, w: w, r: r, id: "req-" + uuid.NewString()}
	w.Header().Set("X-Openstack-Request-Id", q.id)
	defer func() {
		if p := recover(); p != nil {
			a.logger.Error("network api handler panic", "request_id", q.id, "method", r.Method, "path", r.URL.Path, "panic", p)
			a.write(q, nil, fmt.Errorf("panic: %v", p))
		}
	}()
	rep, err := a.dispatch(q)
	a.write(q, rep, err)
}

// authenticate verifies X-Auth-Token: Neutron needs a project-scoped
// token.
func (q *request) authenticate() error {
	raw := q.r.Header.Get("X-Auth-Token")
	if raw == "" || q.api.verifier == nil {
		return errUnauthorized
	}
	tok, err := q.api.verifier.Verify(raw)
	if err != nil || tok == nil {
		return errUnauthorized
	}
	if tok.ProjectID == "" {
		return apiErrorf(http.StatusForbidden, "HTTPForbidden", "A project-scoped token is required.")
	}
	q.token, q.authToken = tok, raw
	route.ObserveCaller(q.r.Context(), tok.UserID, tok.ProjectID)
	return nil
}

// errUnauthorized is keystonemiddleware's 401.
var errUnauthorized = &apiError{status: http.StatusUnauthorized, msg: "The request you have made requires authentication."}

// apiError is an answer the edge decides itself.
type apiError struct {
	status int
	typ    string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func apiErrorf(status int, typ, format string, args ...any) error {
	return &apiError{status: status, typ: typ, msg: fmt.Sprintf(format, args...)}
}

// badRequest is Neutron's 400 for a request it cannot parse or accept.
func badRequest(format string, args ...any) error {
	return apiErrorf(http.StatusBadRequest, "HTTPBadRequest", format, args...)
}

// httpTypes are the types of errors without a Neutron exception name.
var httpTypes = map[int]string{
	http.StatusBadRequest: "HTTPBadRequest", http.StatusForbidden: "HTTPForbidden", http.StatusNotFound: "HTTPNotFound",
	http.StatusConflict: "HTTPConflict", http.StatusRequestEntityTooLarge: "HTTPRequestEntityTooLarge",
	http.StatusServiceUnavailable: "HTTPServiceUnavailable", http.StatusInternalServerError: "HTTPInternalServerError",
}

// statuses are the HTTP statuses of the servers' error kinds: the kit's,
// but a quota reached is Neutron's 409 (OverQuota).
var statuses = route.Default.With(route.Statuses{structs.KindQuotaReached: http.StatusConflict})

// statusOf maps an error to Neutron's status, type and message.
func statusOf(err error) (int, string, string) {
	var e *apiError
	if errors.As(err, &e) {
		return e.status, e.typ, e.msg
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge, "HTTPRequestEntityTooLarge", "Request is too large."
	}
	status, known := statuses.Of(err)
	if !known {
		return status, httpTypes[status], "Request Failed: internal server error while processing your request."
	}
	typ := structs.ErrorType(err)
	if typ == "" {
		typ = httpTypes[status]
	}
	return status, typ, structs.Message(err)
}

// write answers a reply, or an error as Neutron's error body.
func (a *API) write(q *request, rep *reply, err error) {
	h := q.w.Header()
	if err != nil {
		status, typ, msg := statusOf(err)
		if status >= 500 {
			a.logger.Error("network api request failed", "request_id", q.id, "method", q.r.Method, "path", q.r.URL.Path, "error", err)
		}
		if status == http.StatusUnauthorized {
			h.Set("WWW-Authenticate", fmt.Sprintf("Keystone uri=%q", strings.TrimSuffix(q.base(), MountPath)+"/identity"))
			rep = &reply{status: status, body: map[string]any{"error": map[string]any{"code": status, "title": "Unauthorized", "message": msg}}}
		} else {
			rep = &reply{status: status, body: map[string]any{"NeutronError": map[string]any{"type": typ, "message": msg, "detail": ""}}}
		}
	}
	var body []byte
	if rep.body != nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if encErr := enc.Encode(rep.body); encErr != nil {
			a.logger.Error("encode network api response", "request_id", q.id, "error", encErr)
			rep.status = http.StatusInternalServerError
			buf.Reset()
			_ = json.NewEncoder(&buf).Encode(map[string]any{"NeutronError": map[string]any{"type": "HTTPInternalServerError",
				"message": "Request Failed: internal server error while processing your request.", "detail": ""}})
		}
		body = bytes.TrimRight(buf.Bytes(), "\n")
		h.Set("Content-Type", "application/json")
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	q.w.WriteHeader(rep.status)
	if len(body) > 0 && q.r.Method != http.MethodHead {
		_, _ = q.w.Write(body)
	}
}

// maxBody bounds request bodies.
const maxBody = 1 << 20

// decodeBody reads the JSON object of a request.
func (q *request) decodeBody() (map[string]any, error) {
	data, err := io.ReadAll(http.MaxBytesReader(q.w, q.r.Body, maxBody))
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, badRequest("Resource body required")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var body map[string]any
	if err := dec.Decode(&body); err != nil || dec.More() {
		return nil, badRequest("Malformed request body")
	}
	if body == nil {
		return nil, badRequest("Resource body required")
	}
	return body, nil
}
