package neutron

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent/identity"
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
	routes   []route
}

// handler answers one request.
type handler func(q *request) (*reply, error)

// route is one entry of the route table: a method and a path under
// MountPath whose {name} segments are parameters. public routes need no
// token.
type route struct {
	method string
	segs   []string
	h      handler
	public bool
}

// New builds the API from its config.
func New(cfg Config) *API {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	a := &API{rpc: cfg.RPC, verifier: cfg.Verifier, logger: logger}
	add := func(pattern string, h handler, public bool) {
		method, path, _ := strings.Cut(pattern, " ")
		a.routes = append(a.routes, route{method: method, segs: splitPath(path), h: h, public: public})
	}
	add("GET /", a.versions, true)
	add("GET /v2.0", a.versionIndex, true)
	add("GET /v2.0/extensions", a.extensionList, false)
	add("GET /v2.0/extensions/{alias}", a.extensionShow, false)
	for _, res := range resources {
		res := res
		add("GET /v2.0/"+res.path, func(q *request) (*reply, error) { return a.list(q, res) }, false)
		add("POST /v2.0/"+res.path, func(q *request) (*reply, error) { return a.create(q, res) }, false)
		add("GET /v2.0/"+res.path+"/{id}", func(q *request) (*reply, error) { return a.show(q, res) }, false)
		add("PUT /v2.0/"+res.path+"/{id}", func(q *request) (*reply, error) { return a.update(q, res) }, false)
		add("DELETE /v2.0/"+res.path+"/{id}", func(q *request) (*reply, error) { return a.remove(q, res) }, false)
	}
	add("PUT /v2.0/routers/{id}/add_router_interface", a.addRouterInterface, false)
	add("PUT /v2.0/routers/{id}/remove_router_interface", a.removeRouterInterface, false)
	add("GET /v2.0/quotas", a.quotaList, false)
	add("GET /v2.0/quotas/{project}", a.quotaShow, false)
	add("GET /v2.0/quotas/{project}/details", a.quotaDetails, false)
	add("GET /v2.0/quotas/{project}/default", a.quotaDefault, false)
	add("PUT /v2.0/quotas/{project}", a.quotaUpdate, false)
	add("DELETE /v2.0/quotas/{project}", a.quotaDelete, false)
	add("GET /v2.0/auto-allocated-topology/{project}", a.autoTopologyShow, false)
	add("DELETE /v2.0/auto-allocated-topology/{project}", a.autoTopologyDelete, false)
	add("GET /v2.0/availability_zones", a.zoneList, false)
	// Literal segments win over parameters (/quotas/x/details before
	// nothing, /extensions before /{id}).
	sort.SliceStable(a.routes, func(i, j int) bool { return moreSpecific(a.routes[i].segs, a.routes[j].segs) })
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

// call makes an RPC on the caller's behalf, passing its token along.
func (q *request) call(method string, args, out any) error {
	if f := reflect.ValueOf(args).Elem().FieldByName("AuthToken"); f.IsValid() && f.CanSet() {
		f.SetString(q.authToken)
	}
	return q.api.rpc.RPC(method, args, out)
}

// base is the scheme and host the client used, plus MountPath.
func (q *request) base() string {
	scheme := "http"
	if q.r.TLS != nil {
		scheme = "https"
	}
	if p := q.r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	return scheme + "://" + q.r.Host + MountPath
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func moreSpecific(a, b []string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		pa, pb := strings.HasPrefix(a[i], "{"), strings.HasPrefix(b[i], "{")
		if pa != pb {
			return pb
		}
	}
	return false
}

func match(segs, path []string) (map[string]string, bool) {
	if len(segs) != len(path) {
		return nil, false
	}
	params := map[string]string{}
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			v, err := url.PathUnescape(path[i])
			if err != nil {
				return nil, false
			}
			params[strings.Trim(s, "{}")] = v
		} else if s != path[i] {
			return nil, false
		}
	}
	return params, true
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

// dispatch routes a request: the path under MountPath, a ".json"
// suffix ignored as Neutron ignores it.
func (a *API) dispatch(q *request) (*reply, error) {
	raw := q.r.URL.EscapedPath()
	if !strings.HasPrefix(raw, MountPath) {
		return nil, apiErrorf(http.StatusNotFound, "HTTPNotFound", "The resource could not be found.")
	}
	path := splitPath(strings.TrimPrefix(raw, MountPath))
	if n := len(path); n > 0 {
		path[n-1] = strings.TrimSuffix(path[n-1], ".json")
	}
	method := q.r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	var allowed []string
	for _, rt := range a.routes {
		params, ok := match(rt.segs, path)
		if !ok {
			continue
		}
		if rt.method != method {
			allowed = append(allowed, rt.method)
			continue
		}
		q.params = params
		if !rt.public || q.r.Header.Get("X-Auth-Token") != "" {
			if err := q.authenticate(); err != nil {
				if rt.public {
					q.token = nil
				} else {
					return nil, err
				}
			}
		}
		return rt.h(q)
	}
	if len(allowed) > 0 {
		sort.Strings(allowed)
		q.w.Header().Set("Allow", strings.Join(allowed, ", "))
		return nil, apiErrorf(http.StatusMethodNotAllowed, "HTTPMethodNotAllowed", "The method %s is not allowed for this resource.", q.r.Method)
	}
	return nil, apiErrorf(http.StatusNotFound, "HTTPNotFound", "The resource could not be found.")
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
	status := http.StatusInternalServerError
	switch structs.KindOf(err) {
	case structs.KindInvalid:
		status = http.StatusBadRequest
	case structs.KindNotFound:
		status = http.StatusNotFound
	case structs.KindConflict, structs.KindQuotaReached:
		status = http.StatusConflict
	case structs.KindPermission:
		status = http.StatusForbidden
	case structs.KindTooLarge:
		status = http.StatusRequestEntityTooLarge
	case structs.KindNoLeader, structs.KindUnavailable:
		status = http.StatusServiceUnavailable
	default:
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
