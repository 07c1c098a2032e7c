package identity

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// maxBody bounds request bodies.
const maxBody = 1 << 20

// apiVersion is the Identity API version served.
const apiVersion = "v3.14"

// wrap turns a handler into an http.HandlerFunc: request id, JSON
// encoding, Keystone's error body and panic containment.
func (s *Service) wrap(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Openstack-Request-Id", "req-"+uuid.NewString())
		w.Header().Set("Vary", "X-Auth-Token")
		defer func() {
			if p := recover(); p != nil {
				s.logger.Error("identity handler panic", "path", r.URL.Path, "panic", p)
				s.writeError(w, r, fmt.Errorf("panic: %v", p))
			}
		}()
		status, body, err := h(w, r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if body == nil {
			w.WriteHeader(status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if err := json.NewEncoder(w).Encode(body); err != nil {
			s.logger.Debug("encode identity response", "error", err)
		}
	}
}

// apiError is an error answered with a given HTTP status and message.
type apiError struct {
	code int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

// errorBody is Keystone's error document.
type errorBody struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Title   string `json:"title"`
	} `json:"error"`
}

func errUnauthorized() error {
	return &apiError{code: http.StatusUnauthorized, msg: structs.AuthFailedMessage}
}

func errForbidden(action string) error { return errForbiddenRule("identity:" + action) }

// errForbiddenRule is Keystone's 403 naming the policy rule refused.
func errForbiddenRule(rule string) error {
	return &apiError{code: http.StatusForbidden, msg: "You are not authorized to perform the requested action: " + rule + "."}
}

func errNotFound(what, id string) error {
	return &apiError{code: http.StatusNotFound, msg: fmt.Sprintf("Could not find %s: %s.", what, id)}
}

func errBadRequest(format string, args ...any) error {
	return &apiError{code: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// statuses are the HTTP statuses of the servers' error kinds: the kit's,
// but a refused credential there is Keystone's authentication failure
// (401), not a 403.
var statuses = route.Default.With(route.Statuses{structs.KindPermission: http.StatusUnauthorized})

// writeError answers err as Keystone does: errors of the servers map by
// kind (statuses), and every 401 says only that authentication failed.
func (s *Service) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &tooBig):
		ae = &apiError{code: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("Request is too large: more than %d bytes.", tooBig.Limit)}
	default:
		ae = &apiError{msg: structs.Message(err)}
		var known bool
		ae.code, known = statuses.Of(err)
		switch {
		case !known:
			s.logger.Error("identity request failed", "method", r.Method, "path", r.URL.Path, "error", err)
			ae.msg = "An unexpected error prevented the server from fulfilling your request."
		case ae.code == http.StatusUnauthorized:
			ae.msg = structs.AuthFailedMessage
		}
	}
	if ae.code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf("Keystone uri=%q", s.base(r)+"/identity"))
	}
	var body errorBody
	body.Error.Code, body.Error.Message, body.Error.Title = ae.code, ae.msg, http.StatusText(ae.code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ae.code)
	_ = json.NewEncoder(w).Encode(body)
}

// decodeJSON reads exactly one JSON value into out, refusing unknown
// fields (as Keystone's schemas), trailing data and large bodies.
func decodeJSON(w http.ResponseWriter, r *http.Request, out any) error {
	err := httpx.DecodeStrict(w, r, maxBody, out)
	var tooBig *http.MaxBytesError
	switch {
	case err == nil, errors.As(err, &tooBig):
		return err
	case errors.Is(err, httpx.ErrEmptyBody):
		return errBadRequest("The request body is empty.")
	case errors.Is(err, httpx.ErrTrailingData):
		return errBadRequest("Invalid input: data after the JSON document.")
	default:
		return errBadRequest("Invalid input: %v.", err)
	}
}

// base is the external base URL of this agent, without a trailing slash.
func (s *Service) base(r *http.Request) string {
	return strings.TrimSuffix(s.cfg.ExternalURL(r), "/")
}

// versionDoc describes Identity v3 for discovery.
func (s *Service) versionDoc(r *http.Request) map[string]any {
	return map[string]any{
		"id":      apiVersion,
		"status":  "stable",
		"updated": "2020-04-07T00:00:00Z",
		"links":   []map[string]string{{"rel": "self", "href": s.base(r) + "/identity/v3/"}},
		"media-types": []map[string]string{
			{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"},
		},
	}
}

// versions answers GET /identity as Keystone: 300 Multiple Choices.
func (s *Service) versions(w http.ResponseWriter, r *http.Request) (int, any, error) {
	return http.StatusMultipleChoices, map[string]any{"versions": map[string]any{"values": []any{s.versionDoc(r)}}}, nil
}

// version answers GET /identity/v3.
func (s *Service) version(w http.ResponseWriter, r *http.Request) (int, any, error) {
	return http.StatusOK, map[string]any{"version": s.versionDoc(r)}, nil
}

// call is an RPC to the servers.
func (s *Service) call(method string, args, reply any) error { return s.rpc.RPC(method, args, reply) }

// callAs is an RPC on behalf of the request's caller: it carries the
// caller's X-Auth-Token, which the servers check against their own
// rules (server/rpc_policy.go).
func (s *Service) callAs(r *http.Request, method string, args, reply any) error {
	return route.AsCaller(s.rpc, r.Header.Get("X-Auth-Token")).RPC(method, args, reply)
}

// authenticated is the caller's verified X-Auth-Token (401 when missing
// or not valid): the one dispatch verified, else verified now.
func (s *Service) authenticated(r *http.Request) (*Token, error) {
	if t, ok := r.Context().Value(callerKey{}).(*Token); ok {
		return t, nil
	}
	tok := r.Header.Get("X-Auth-Token")
	if tok == "" {
		return nil, errUnauthorized()
	}
	t, err := s.Verify(tok)
	if err != nil {
		return nil, errUnauthorized()
	}
	return t, nil
}
