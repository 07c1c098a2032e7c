package guest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/stratus-cloud/stratus/internal/httpx"
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

// errorJSON is the native API's error body, with the error's type so a
// forwarding agent can rebuild it.
type errorJSON struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
	Type  string `json:"type,omitempty"`
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
	inst, t, err := s.locateInstance(id)
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
	u := "http://" + addr + "/v1/instances/" + url.PathEscape(id) + "/admin-password"
	return s.forward(ctx, http.MethodPost, u, body, nil)
}

func (s *Service) forwardUptime(ctx context.Context, addr, hostID string) (string, error) {
	var out UptimeJSON
	u := "http://" + addr + "/v1/hosts/" + url.PathEscape(hostID) + "/uptime"
	if err := s.forward(ctx, http.MethodGet, u, nil, &out); err != nil {
		return "", err
	}
	return out.Uptime, nil
}

// forward sends a request to the agent that runs the host and decodes
// its answer into out (nil for none); its error keeps the kind and type
// the other agent answered.
func (s *Service) forward(ctx context.Context, method, u string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set(forwardedHeader, "1")
	// The caller's own token (httpx.WithToken): the other agent checks
	// it as its route's access level requires.
	httpx.SetToken(ctx, req)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return hostUnavailable("reach the host's agent: %v", errorWithoutURL(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return hostUnavailable("read the host's agent's answer: %v", err)
	}
	if resp.StatusCode/100 != 2 {
		var e errorJSON
		if json.Unmarshal(raw, &e) != nil || e.Kind == "" {
			return hostUnavailable("the host's agent answered %s", resp.Status)
		}
		return &structs.Error{Kind: structs.ErrorKind(e.Kind), Type: e.Type, Msg: e.Error}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode the host's agent's answer: %w", err)
	}
	return nil
}

// errorWithoutURL drops the URL from a client error: it is noise to the
// user.
func errorWithoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeErr writes an error as the native API does, with its type.
func writeErr(w http.ResponseWriter, err error) {
	kind := structs.KindOf(err)
	status := http.StatusInternalServerError
	switch {
	case ErrorType(err) == TypeNotSupported:
		status = http.StatusNotImplemented
	case kind == structs.KindInvalid:
		status = http.StatusBadRequest
	case kind == structs.KindNotFound:
		status = http.StatusNotFound
	case kind == structs.KindConflict:
		status = http.StatusConflict
	case kind == structs.KindPermission:
		status = http.StatusForbidden
	case kind == structs.KindUnauthenticated:
		status = http.StatusUnauthorized
	case kind == structs.KindNoLeader, kind == structs.KindUnavailable:
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, errorJSON{Error: structs.Message(err), Kind: string(kind), Type: ErrorType(err)})
}
