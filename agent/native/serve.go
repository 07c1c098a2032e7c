package native

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// handler answers a matched, authorized request: a value to encode as
// JSON, nil when it wrote its own answer (or has none), or an error to
// map to a status and the native error body.
type handler func(w http.ResponseWriter, q *request) (any, error)

// request is one request to a route: the HTTP request (with the route's
// parameters also as its PathValues, which the console and guest
// services read), the caller's token and verified subject, and the
// servers as that caller.
type request struct {
	*http.Request
	params route.Params
	token  string
	// subject is the verified caller; nil when ACLs are off or the
	// route is public.
	subject *policy.Subject
	// rpc makes every call with the caller's token.
	rpc route.RPC
}

// param is the route's path parameter name, unescaped.
func (q *request) param(name string) string { return q.params.Get(name) }

// unmatchedRoute is the metrics label of requests no route took.
const unmatchedRoute = "unmatched"

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	m, err := a.match(r)
	if err != nil {
		a.answer(w, r, unmatchedRoute, policy.Public, nil, func(w http.ResponseWriter, q *request) (any, error) {
			return nil, unmatched(w, r, err)
		})
		return
	}
	if raw := a.raw[m.Route.Pattern]; raw != nil {
		raw.ServeHTTP(w, r)
		return
	}
	a.answer(w, r, m.Route.Pattern, m.Route.Access, m.Params, m.Route.Handle)
}

// match finds a request's route. A path with an empty segment (a
// trailing slash) has none: the API's paths are exact.
func (a *API) match(r *http.Request) (*route.Match[handler], error) {
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	if slices.Contains(segs, "") {
		return nil, route.ErrNotFound
	}
	return a.table.Match(route.Request{Method: r.Method, Path: segs, Query: r.URL.Query(), Ctx: r.Context()})
}

// allowOrder is the order methods are listed in an Allow header.
var allowOrder = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete}

// unmatched explains a request no route took: a known path with another
// method is 405 with an Allow header, anything else 404.
func unmatched(w http.ResponseWriter, r *http.Request, err error) error {
	var na *route.MethodNotAllowedError
	if !errors.As(err, &na) {
		return structs.Errorf(structs.KindNotFound, "no route for %s %s", r.Method, r.URL.Path)
	}
	allow := slices.Clone(na.Allow)
	slices.SortStableFunc(allow, func(x, y string) int { return rank(x) - rank(y) })
	list := strings.Join(allow, ", ")
	w.Header().Set("Allow", list)
	return structs.Errorf(KindMethodNotAllowed, "%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, list)
}

// rank is a method's place in allowOrder; others come after, as sorted.
func rank(method string) int {
	if i := slices.Index(allowOrder, method); i >= 0 {
		return i
	}
	return len(allowOrder)
}

// answer runs a route's handler the same way for every route:
// authorization, the instance-scope check, JSON encoding, error
// mapping, panic containment and metrics.
func (a *API) answer(w http.ResponseWriter, r *http.Request, name string, level policy.Access, params route.Params, h handler) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		if p := recover(); p != nil {
			a.logger.Error("http handler panic", "route", name, "panic", p)
			writeError(rec, structs.Errorf(structs.KindInternal, "internal error"))
		}
		if a.cfg.Observer != nil {
			a.cfg.Observer.ObserveHTTP(name, rec.status, time.Since(start))
		}
	}()
	token := requestToken(r)
	subject, err := a.authorize(token, level)
	if subject != nil {
		route.ObserveCaller(r.Context(), subject.UserID, subject.ProjectID)
	}
	// Requests forwarded to another agent on the caller's behalf
	// present the caller's token there.
	r = r.WithContext(httpx.WithToken(r.Context(), token))
	for k, v := range params {
		r.SetPathValue(k, v)
	}
	q := &request{Request: r, params: params, token: token, subject: subject, rpc: route.AsCaller(a.cfg.RPC, token)}
	if err == nil && strings.Contains(name, " /v1/instances/{id}") {
		err = a.checkInstanceScope(q, q.param("id"))
	}
	if err != nil {
		writeError(rec, err)
		return
	}
	obj, err := h(rec, q)
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
