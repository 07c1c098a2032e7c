package identity

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/structs"
)

// Route is one HTTP route the agent mounts: a net/http ServeMux pattern
// and its handler.
type Route struct {
	Pattern string
	Handler http.HandlerFunc
}

// maxBody bounds request bodies.
const maxBody = 1 << 20

// apiVersion is the Identity API version served.
const apiVersion = "v3.14"

// handler answers a status and a body to encode as JSON (nil for none),
// or an error to answer Keystone's way.
type handler func(w http.ResponseWriter, r *http.Request) (int, any, error)

// Routes returns the identity routes, all under /identity.
func (s *Service) Routes() []Route { return s.routes }

func (s *Service) buildRoutes() []Route {
	table := []struct {
		pattern string
		h       handler
	}{
		{"GET /identity", s.versions},
		{"GET /identity/{$}", s.versions},
		{"GET /identity/v3", s.version},
		{"GET /identity/v3/{$}", s.version},
		{"POST /identity/v3/auth/tokens", s.issueToken},
		{"GET /identity/v3/auth/tokens", s.validateToken},
		{"HEAD /identity/v3/auth/tokens", s.validateToken},
		{"DELETE /identity/v3/auth/tokens", s.revokeToken},
		{"GET /identity/v3/auth/catalog", s.authCatalog},
		{"GET /identity/v3/auth/projects", s.authProjects},
		{"GET /identity/v3/projects", s.projectList},
		{"POST /identity/v3/projects", s.projectCreate},
		{"GET /identity/v3/projects/{id}", s.projectGet},
		{"PATCH /identity/v3/projects/{id}", s.projectUpdate},
		{"DELETE /identity/v3/projects/{id}", s.projectDelete},
		{"GET /identity/v3/users", s.userList},
		{"POST /identity/v3/users", s.userCreate},
		{"GET /identity/v3/users/{id}", s.userGet},
		{"PATCH /identity/v3/users/{id}", s.userUpdate},
		{"DELETE /identity/v3/users/{id}", s.userDelete},
		{"POST /identity/v3/users/{id}/password", s.userPassword},
		{"GET /identity/v3/users/{id}/projects", s.userProjects},
		{"GET /identity/v3/users/{id}/credentials/OS-EC2", s.ec2List},
		{"POST /identity/v3/users/{id}/credentials/OS-EC2", s.ec2Create},
		{"GET /identity/v3/users/{id}/credentials/OS-EC2/{access}", s.ec2Get},
		{"DELETE /identity/v3/users/{id}/credentials/OS-EC2/{access}", s.ec2Delete},
		{"GET /identity/v3/roles", s.roleList},
		{"POST /identity/v3/roles", s.roleCreate},
		{"GET /identity/v3/roles/{id}", s.roleGet},
		{"DELETE /identity/v3/roles/{id}", s.roleDelete},
		{"GET /identity/v3/projects/{project}/users/{user}/roles", s.grantList},
		{"PUT /identity/v3/projects/{project}/users/{user}/roles/{role}", s.grantCreate},
		{"GET /identity/v3/projects/{project}/users/{user}/roles/{role}", s.grantCheck},
		{"HEAD /identity/v3/projects/{project}/users/{user}/roles/{role}", s.grantCheck},
		{"DELETE /identity/v3/projects/{project}/users/{user}/roles/{role}", s.grantDelete},
		{"GET /identity/v3/role_assignments", s.assignmentList},
		{"GET /identity/v3/domains", s.domainList},
		{"GET /identity/v3/domains/{id}", s.domainGet},
	}
	s.mux = http.NewServeMux()
	routes := make([]Route, 0, len(table)+1)
	for _, rt := range table {
		h := s.wrap(rt.h)
		s.mux.Handle(rt.pattern, h)
		routes = append(routes, Route{Pattern: rt.pattern, Handler: h})
	}
	return append(routes, Route{Pattern: "/identity/", Handler: s.wrap(s.unmatched)})
}

// unmatched answers requests no route took: 405 with Allow for a known
// path, else 404.
func (s *Service) unmatched(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if allow := httpx.AllowedMethods(s.mux, r, "", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"); len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return 0, nil, &apiError{code: http.StatusMethodNotAllowed, msg: "The method is not allowed for the requested URL."}
	}
	return 0, nil, &apiError{code: http.StatusNotFound, msg: "The resource could not be found."}
}

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

func errForbidden(action string) error {
	return &apiError{code: http.StatusForbidden, msg: "You are not authorized to perform the requested action: identity:" + action + "."}
}

func errNotFound(what, id string) error {
	return &apiError{code: http.StatusNotFound, msg: fmt.Sprintf("Could not find %s: %s.", what, id)}
}

func errBadRequest(format string, args ...any) error {
	return &apiError{code: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// writeError answers err as Keystone does. Errors of the servers map by
// kind; a permission error there is an authentication failure (401).
func (s *Service) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &tooBig):
		ae = &apiError{code: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("Request is too large: more than %d bytes.", tooBig.Limit)}
	default:
		ae = &apiError{msg: structs.Message(err)}
		switch structs.KindOf(err) {
		case structs.KindInvalid:
			ae.code = http.StatusBadRequest
		case structs.KindNotFound:
			ae.code = http.StatusNotFound
		case structs.KindConflict:
			ae.code = http.StatusConflict
		case structs.KindPermission:
			ae.code, ae.msg = http.StatusUnauthorized, structs.AuthFailedMessage
		case structs.KindNoLeader, structs.KindUnavailable:
			ae.code = http.StatusServiceUnavailable
		default:
			s.logger.Error("identity request failed", "method", r.Method, "path", r.URL.Path, "error", err)
			ae.code = http.StatusInternalServerError
			ae.msg = "An unexpected error prevented the server from fulfilling your request."
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
	if f := reflect.ValueOf(args).Elem().FieldByName("AuthToken"); f.IsValid() && f.CanSet() {
		f.SetString(r.Header.Get("X-Auth-Token"))
	}
	return s.rpc.RPC(method, args, reply)
}

// authenticated verifies the caller's X-Auth-Token (401 when missing or
// not valid).
func (s *Service) authenticated(r *http.Request) (*Token, error) {
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

// requireAdmin verifies the caller and requires the admin role (403).
func (s *Service) requireAdmin(r *http.Request, action string) (*Token, error) {
	t, err := s.authenticated(r)
	if err != nil {
		return nil, err
	}
	if !t.IsAdmin() {
		return nil, errForbidden(action)
	}
	return t, nil
}
