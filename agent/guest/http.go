package guest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"github.com/stratus-cloud/stratus/agent/forward"
	"github.com/stratus-cloud/stratus/structs"
)

// forwardedHeader marks a request one agent forwarded to another, which
// must answer it from its own hosts and never forward it again.
const forwardedHeader = "X-Stratus-Guest-Forwarded"

// PasswordJSON is the native API's request to set an instance's
// administrator password.
type PasswordJSON struct {
	Password string
}

// UptimeJSON is the native API's host uptime.
type UptimeJSON struct {
	Uptime string
}

// HandlePassword answers POST /v1/instances/{id}/admin-password
// {"Password": "…"}: 204 once the guest has the password. It writes its
// own answers, errors included.
func (s *Service) HandlePassword(w http.ResponseWriter, r *http.Request) (any, error) {
	var req PasswordJSON
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeErr(w, structs.Errorf(structs.KindInvalid, "password request: %v", err))
		return nil, nil
	}
	id := r.PathValue("id")
	var err error
	if r.Header.Get(forwardedHeader) != "" {
		err = s.passwordHere(r.Context(), id, req.Password)
	} else {
		err = s.SetAdminPassword(r.Context(), id, req.Password)
	}
	if err != nil {
		writeErr(w, err)
		return nil, nil
	}
	w.WriteHeader(http.StatusNoContent)
	return nil, nil
}

// HandleUptime answers GET /v1/hosts/{id}/uptime.
func (s *Service) HandleUptime(w http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	var up string
	var err error
	if r.Header.Get(forwardedHeader) != "" {
		up, err = s.uptimeHere(r.Context(), id)
	} else {
		up, err = s.HostUptime(r.Context(), id)
	}
	if err != nil {
		writeErr(w, err)
		return nil, nil
	}
	writeJSON(w, http.StatusOK, UptimeJSON{Uptime: up})
	return nil, nil
}

// passwordHere answers a forwarded request from this agent's hosts only.
func (s *Service) passwordHere(ctx context.Context, id, password string) error {
	inst, t, err := s.locateInstance(ctx, id)
	if err != nil {
		return err
	}
	if t.driver == nil {
		return notReady("Instance %s is not ready: it is not on this agent's hosts", id)
	}
	return s.localPassword(ctx, t.driver, inst, password)
}

func (s *Service) uptimeHere(ctx context.Context, hostID string) (string, error) {
	t, err := s.locateHost(hostID)
	if err != nil {
		return "", err
	}
	if t.driver == nil {
		return "", hostUnavailable("host %s is not this agent's", hostID)
	}
	return localUptime(ctx, t.driver)
}

func (s *Service) forwardPassword(ctx context.Context, addr, id, password string) error {
	body, err := json.Marshal(PasswordJSON{Password: password})
	if err != nil {
		return err
	}
	u := s.cfg.Scheme + "://" + addr + "/v1/instances/" + url.PathEscape(id) + "/admin-password"
	return s.forward(ctx, http.MethodPost, u, body, nil)
}

func (s *Service) forwardUptime(ctx context.Context, addr, hostID string) (string, error) {
	var out UptimeJSON
	u := s.cfg.Scheme + "://" + addr + "/v1/hosts/" + url.PathEscape(hostID) + "/uptime"
	if err := s.forward(ctx, http.MethodGet, u, nil, &out); err != nil {
		return "", err
	}
	return out.Uptime, nil
}

// forward sends a request to the agent that runs the host and decodes
// its answer into out (nil for none); its error keeps the kind and type
// the other agent answered.
func (s *Service) forward(ctx context.Context, method, u string, body []byte, out any) error {
	return forward.Do(ctx, s.client, &forward.Request{Method: method, URL: u, Marker: forwardedHeader, Body: body,
		Peer: "the host's agent", Unavailable: hostUnavailable}, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) { forward.WriteJSON(w, status, v) }

// writeErr writes an error as the native API does, with its type.
func writeErr(w http.ResponseWriter, err error) {
	forward.WriteError(w, err, ErrorType(err), ErrorType(err) == TypeNotSupported)
}
