package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/agent/glance"
	"github.com/stratus-cloud/stratus/agent/neutron"
	"github.com/stratus-cloud/stratus/agent/nova"
	s3api "github.com/stratus-cloud/stratus/agent/s3"
	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// maxJSONBody bounds every JSON request body; larger ones are refused
// before they are read into memory.
const maxJSONBody = 1 << 20

// route is one entry of the declarative HTTP route table.
type route struct {
	// pattern is a net/http ServeMux pattern: "GET /v1/flavors/{id}".
	pattern string
	// access is who may call the route when ACLs are on (auth.go);
	// routes on one instance also hide other projects' instances.
	access policy.Access
	// handler returns a value to encode as JSON, or an error to map.
	handler func(w http.ResponseWriter, r *http.Request) (any, error)
}

// routes builds the HTTP handler from the route table.
func (a *Agent) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range a.routeTable() {
		mux.Handle(rt.pattern, a.wrap(rt.pattern, rt.access, rt.handler))
	}
	a.mountUI(mux)
	a.mountConsoleProxy(mux)
	mux.Handle("GET /v1/metrics", a.metrics.handler())
	if a.identity != nil {
		for _, r := range a.identity.Routes() {
			mux.Handle(r.Pattern, r.Handler)
		}
	}
	if a.nova != nil {
		mux.Handle(nova.MountPath+"/", a.nova.Handler())
	}
	if a.neutron != nil {
		mux.Handle(neutron.MountPath, a.neutron.Handler())
		mux.Handle(neutron.MountPath+"/", a.neutron.Handler())
	}
	if a.s3 != nil {
		mux.Handle(s3api.MountPath+"/", a.s3.Handler(s3api.MountPath))
	}
	if a.glance != nil {
		mux.Handle(glance.MountPath, a.glance.Handler())
		mux.Handle(glance.MountPath+"/", a.glance.Handler())
	}
	mux.Handle("/v1/", a.wrap("unmatched", policy.Public, func(w http.ResponseWriter, r *http.Request) (any, error) {
		return nil, unmatched(mux, w, r)
	}))
	return mux
}

// routeTable is every native API route with its access level: the
// policy of /v1 in one place (website/security.md lists it).
func (a *Agent) routeTable() []route {
	table := []route{
		{"GET /v1/status/leader", policy.Public, a.statusLeader},
		{"GET /v1/status/peers", policy.Public, a.statusPeers},
		{"GET /v1/agent/self", policy.Admin, a.agentSelf},
		{"GET /v1/agent/members", policy.Admin, a.agentMembers},
		{"GET /v1/flavors", policy.Anyone, a.flavorList},
		{"POST /v1/flavors", policy.Admin, a.flavorCreate},
		{"GET /v1/flavors/{id}", policy.Anyone, a.flavorGet},
		{"DELETE /v1/flavors/{id}", policy.Admin, a.flavorDelete},
		{"GET /v1/keypairs", policy.Anyone, a.keyPairList},
		{"POST /v1/keypairs", policy.Anyone, a.keyPairCreate},
		{"GET /v1/keypairs/{name}", policy.Anyone, a.keyPairGet},
		{"DELETE /v1/keypairs/{name}", policy.Anyone, a.keyPairDelete},
		{"GET /v1/instances", policy.Reader, a.instanceList},
		{"POST /v1/instances", policy.Member, a.instanceCreate},
		{"GET /v1/instances/{id}", policy.Reader, a.instanceGet},
		{"DELETE /v1/instances/{id}", policy.Member, a.instanceDelete},
		{"POST /v1/instances/{id}/actions", policy.Member, a.instanceAction},
		{"GET /v1/instances/{id}/actions", policy.Reader, a.instanceActionList},
		{"GET /v1/instances/{id}/actions/{request_id}", policy.Reader, a.instanceActionGet},
		{"POST /v1/instances/{id}/snapshot", policy.Member, a.instanceSnapshot},
		{"GET /v1/migrations", policy.Admin, a.migrationList},
		{"GET /v1/hosts", policy.Admin, a.hostList},
		{"GET /v1/hosts/{id}", policy.Admin, a.hostGet},
		{"POST /v1/hosts/{id}/enable", policy.Admin, a.hostEnable},
		{"POST /v1/hosts/{id}/disable", policy.Admin, a.hostDisable},
		{"POST /v1/hosts/{id}/drain", policy.Admin, a.hostDrain},
		{"GET /v1/allocations", policy.Admin, a.allocList},
		{"GET /v1/evaluations", policy.Admin, a.evalList},
		{"GET /v1/evaluations/{id}", policy.Admin, a.evalGet},
		{"GET /v1/operator/raft/configuration", policy.Admin, a.raftConfiguration},
		{"DELETE /v1/operator/raft/peer", policy.Admin, a.raftRemovePeer},
		{"GET /v1/operator/snapshot", policy.Admin, a.snapshotSave},
		{"PUT /v1/operator/snapshot", policy.Admin, a.snapshotRestore},
		{"GET /v1/operator/scheduler/configuration", policy.Admin, a.schedulerConfigGet},
		{"PUT /v1/operator/scheduler/configuration", policy.Admin, a.schedulerConfigSet},
		{"POST /v1/operator/purge-deleted", policy.Admin, a.purgeDeleted},
	}
	table = append(table, a.imageRoutes()...)
	table = append(table, a.s3Routes()...)
	table = append(table, a.nodeIntroRoutes()...)
	table = append(table, a.networkRoutes()...)
	table = append(table, a.groupRoutes()...)
	table = append(table, a.keyringRoutes()...)
	table = append(table, a.consoleRoutes()...)
	table = append(table, route{"GET /v1/instances/{id}/diagnostics", policy.Admin, a.instanceDiagnostics})
	table = append(table, a.guestRoutes()...)
	table = append(table, a.bootstrapRoutes()...)
	table = append(table, a.uiRoutes()...)
	return table
}

// unmatched explains a request no route took: a known path with another
// method is 405 with an Allow header, anything else 404, both as JSON.
func unmatched(mux *http.ServeMux, w http.ResponseWriter, r *http.Request) error {
	if allow := httpx.AllowedMethods(mux, r, "/v1/", "GET", "POST", "PUT", "DELETE"); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return structs.Errorf(kindMethodNotAllowed, "%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", "))
	}
	return structs.Errorf(structs.KindNotFound, "no route for %s %s", r.Method, r.URL.Path)
}

// wrap turns a handler into an http.Handler: authorization, JSON
// encoding, error mapping, panic containment and metrics, the same for
// every route.
func (a *Agent) wrap(name string, level policy.Access, h func(http.ResponseWriter, *http.Request) (any, error)) http.Handler {
	instanceScoped := strings.Contains(name, " /v1/instances/{id}")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			if p := recover(); p != nil {
				a.logger.Error("http handler panic", "route", name, "panic", p)
				writeError(rec, structs.Errorf(structs.KindInternal, "internal error"))
			}
			a.metrics.observeHTTP(name, rec.status, time.Since(start))
		}()
		r, err := a.authorize(r, level)
		// Requests forwarded to another agent on the caller's behalf
		// present the caller's token there.
		r = r.WithContext(httpx.WithToken(r.Context(), requestToken(r)))
		if err == nil && instanceScoped {
			err = a.checkInstanceScope(r, r.PathValue("id"))
		}
		if err != nil {
			writeError(rec, err)
			return
		}
		obj, err := h(rec, r)
		if err != nil {
			writeError(rec, err)
			return
		}
		if rec.wrote || obj == nil {
			if !rec.wrote {
				rec.WriteHeader(http.StatusOK)
			}
			return
		}
		rec.Header().Set("Content-Type", "application/json")
		je := jsonEncoders.Get()
		defer je.Release()
		if err := je.Enc.Encode(obj); err != nil {
			a.logger.Warn("encode http response", "route", name, "error", err)
			return
		}
		_, _ = rec.Write(je.Buf.Bytes())
	})
}

// jsonEncoders pools the encoders of this API's answers.
var jsonEncoders = httpx.NewJSONPool(func(e *json.Encoder) { e.SetIndent("", "  ") })

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status, s.wrote = code, true
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// httpError is the body of every error answer of the native API.
type httpError struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// statusFor maps an error kind to an HTTP status.
func statusFor(kind structs.ErrorKind) int {
	switch kind {
	case structs.KindInvalid:
		return http.StatusBadRequest
	case structs.KindNotFound:
		return http.StatusNotFound
	case structs.KindConflict:
		return http.StatusConflict
	case structs.KindUnauthenticated:
		return http.StatusUnauthorized
	case structs.KindPermission, structs.KindQuotaReached:
		return http.StatusForbidden
	case structs.KindNoLeader, structs.KindUnavailable:
		return http.StatusServiceUnavailable
	case kindTooLarge:
		return http.StatusRequestEntityTooLarge
	case kindMethodNotAllowed:
		return http.StatusMethodNotAllowed
	default:
		return http.StatusInternalServerError
	}
}

// HTTP-only error kinds.
const (
	kindTooLarge         structs.ErrorKind = "request too large"
	kindMethodNotAllowed structs.ErrorKind = "method not allowed"
)

func writeError(w http.ResponseWriter, err error) {
	kind := structs.KindOf(err)
	msg := structs.Message(err)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		kind, msg = kindTooLarge, fmt.Sprintf("request body is larger than %d bytes", tooBig.Limit)
	}
	w.Header().Set("Content-Type", "application/json")
	if kind == structs.KindUnauthenticated {
		w.Header().Set("WWW-Authenticate", `Bearer realm="stratus"`)
	}
	w.WriteHeader(statusFor(kind))
	_ = json.NewEncoder(w).Encode(httpError{Error: msg, Kind: string(kind)})
}

// decodeJSON reads exactly one JSON value into out, refusing unknown
// fields, trailing data and bodies over maxJSONBody.
func decodeJSON(w http.ResponseWriter, r *http.Request, out any) error {
	err := httpx.DecodeStrict(w, r, maxJSONBody, out)
	var tooBig *http.MaxBytesError
	switch {
	case err == nil, errors.As(err, &tooBig):
		return err
	case errors.Is(err, httpx.ErrEmptyBody), errors.Is(err, httpx.ErrTrailingData):
		return structs.Errorf(structs.KindInvalid, "%v", err)
	default:
		return structs.Errorf(structs.KindInvalid, "request body is not valid: %v", err)
	}
}

// parseQuery fills blocking-query options from ?index=, ?wait=, ?stale.
func parseQuery(r *http.Request, q *structs.QueryOptions) error {
	v := r.URL.Query()
	if s := v.Get("index"); s != "" {
		idx, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return structs.Errorf(structs.KindInvalid, "index %q is not a non-negative integer", s)
		}
		q.MinQueryIndex = idx
	}
	if s := v.Get("wait"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return structs.Errorf(structs.KindInvalid, "wait %q is not a duration such as 30s", s)
		}
		q.MaxQueryTime = d
	}
	if v.Has("stale") {
		q.AllowStale = v.Get("stale") != "false"
	}
	q.AuthToken = requestToken(r)
	return nil
}

// setMeta writes a read's index and leader headers.
func setMeta(w http.ResponseWriter, m *structs.QueryMeta) {
	w.Header().Set("X-Stratus-Index", strconv.FormatUint(m.Index, 10))
	w.Header().Set("X-Stratus-KnownLeader", strconv.FormatBool(m.KnownLeader))
	w.Header().Set("X-Stratus-LastContact", strconv.FormatInt(m.LastContact.Milliseconds(), 10))
}

// setIndex writes a write's index header.
func setIndex(w http.ResponseWriter, index uint64) {
	w.Header().Set("X-Stratus-Index", strconv.FormatUint(index, 10))
}
