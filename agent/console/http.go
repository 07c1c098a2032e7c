package console

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/stratus-cloud/stratus/agent/forward"
	"github.com/stratus-cloud/stratus/structs"
)

// forwardedHeader marks a request one agent forwarded to another, which
// must answer it from its own hosts and never forward it again.
const forwardedHeader = "X-Stratus-Console-Forwarded"

// OutputJSON is the native API's console output.
type OutputJSON struct {
	Output string
}

// OpenJSON is the native API's request for a console.
type OpenJSON struct {
	Type string
}

// RemoteJSON is the native API's console: its URL carries a one-time
// token that expires at ExpiresAt (unix nanoseconds).
type RemoteJSON struct {
	Type      string
	Protocol  string
	URL       string
	ExpiresAt int64
}

// HandleOutput answers GET /v1/instances/{id}/console-output?tail=N.
// It writes its own answers (errors included), so the route table's
// wrapper has nothing left to write.
func (s *Service) HandleOutput(w http.ResponseWriter, r *http.Request) (any, error) {
	lines := 0
	if v := r.URL.Query().Get("tail"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < -1 {
			writeErr(w, structs.Errorf(structs.KindInvalid, "tail must be a whole number of lines, not %q", v))
			return nil, nil
		}
		lines = n
	}
	id := r.PathValue("id")
	var out string
	var err error
	if r.Header.Get(forwardedHeader) != "" {
		out, err = s.outputHere(r.Context(), id, lines)
	} else {
		out, err = s.Output(r.Context(), id, lines)
	}
	if err != nil {
		writeErr(w, err)
		return nil, nil
	}
	writeJSON(w, http.StatusOK, OutputJSON{Output: out})
	return nil, nil
}

// HandleOpen answers POST /v1/instances/{id}/consoles {"Type": "novnc"}.
func (s *Service) HandleOpen(w http.ResponseWriter, r *http.Request) (any, error) {
	var req OpenJSON
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeErr(w, structs.Errorf(structs.KindInvalid, "console request: %v", err))
		return nil, nil
	}
	if req.Type == "" {
		req.Type = structs.ConsoleTypeNoVNC
	}
	id := r.PathValue("id")
	var rc *Remote
	var err error
	if r.Header.Get(forwardedHeader) != "" {
		rc, err = s.openHere(r.Context(), id, req.Type)
	} else {
		rc, err = s.Open(r.Context(), id, req.Type)
	}
	if err != nil {
		writeErr(w, err)
		return nil, nil
	}
	writeJSON(w, http.StatusOK, RemoteJSON{Type: rc.Type, Protocol: rc.Protocol, URL: rc.URL, ExpiresAt: rc.ExpiresAt})
	return nil, nil
}

// outputHere answers a forwarded request from this agent's hosts only.
func (s *Service) outputHere(ctx context.Context, id string, lines int) (string, error) {
	p, err := s.locate(ctx, id)
	if err != nil {
		return "", err
	}
	if p.driver == nil {
		return "", notReady("instance %s is not on this agent's hosts", id)
	}
	return s.localOutput(ctx, p.driver, id, lines)
}

func (s *Service) openHere(ctx context.Context, id, consoleType string) (*Remote, error) {
	if !structs.ValidConsoleType(consoleType) {
		return nil, structs.Errorf(structs.KindInvalid, "Invalid console type %s", consoleType)
	}
	p, err := s.locate(ctx, id)
	if err != nil {
		return nil, err
	}
	if p.driver == nil {
		return nil, notReady("instance %s is not on this agent's hosts", id)
	}
	return s.localOpen(ctx, p, consoleType)
}

func (s *Service) forwardOutput(ctx context.Context, addr, id string, lines int) (string, error) {
	var out OutputJSON
	u := s.cfg.Scheme + "://" + addr + "/v1/instances/" + url.PathEscape(id) + "/console-output?tail=" + strconv.Itoa(lines)
	if err := s.forward(ctx, http.MethodGet, u, nil, &out); err != nil {
		return "", err
	}
	return out.Output, nil
}

func (s *Service) forwardOpen(ctx context.Context, addr, id, consoleType string) (*Remote, error) {
	body, err := json.Marshal(OpenJSON{Type: consoleType})
	if err != nil {
		return nil, err
	}
	var out RemoteJSON
	u := s.cfg.Scheme + "://" + addr + "/v1/instances/" + url.PathEscape(id) + "/consoles"
	if err := s.forward(ctx, http.MethodPost, u, body, &out); err != nil {
		return nil, err
	}
	return &Remote{Type: out.Type, Protocol: out.Protocol, URL: out.URL, ExpiresAt: out.ExpiresAt}, nil
}

// forward sends a request to the hosting agent and decodes its answer;
// its error keeps the kind and type the other agent answered.
func (s *Service) forward(ctx context.Context, method, u string, body []byte, out any) error {
	return forward.Do(ctx, s.client, &forward.Request{Method: method, URL: u, Marker: forwardedHeader, Body: body,
		Peer: "the hosting agent"}, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) { forward.WriteJSON(w, status, v) }

// writeErr writes an error as the native API does, with its type.
func writeErr(w http.ResponseWriter, err error) {
	forward.WriteError(w, err, errorType(err), IsNotSupported(err))
}
