// Package forward carries a native API request from the agent that
// received it to the agent that runs the instance or host it is about
// (console output and proxies, diagnostics, guest passwords, host
// uptime), and brings the answer back: the caller's token travels with
// it, a marker header stops a second hop, and an error keeps the kind
// and type the other agent answered.
//
// It owns only that transport and the native error body both ends
// speak; what to forward, and where, is its callers'. It must not
// decide anything about the request it carries, nor hop twice.
package forward

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
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// maxAnswer bounds how much of the other agent's answer is read.
const maxAnswer = 1 << 20

// ErrorBody is the native API's error body, with the error's type so
// the forwarding agent can rebuild it.
type ErrorBody struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
	Type  string `json:"type,omitempty"`
}

// Request is one forwarded call.
type Request struct {
	Method, URL string
	// Marker is the header that tells the other agent the request was
	// forwarded, so it answers from its own hosts.
	Marker string
	// Body, when not nil, is sent as JSON.
	Body []byte
	// Peer names the other agent in errors ("the hosting agent").
	Peer string
	// Unavailable builds the error for an agent that cannot be reached
	// or answers garbage; nil means a plain KindUnavailable error.
	Unavailable func(format string, args ...any) error
}

// Do sends r with the caller's token (httpx.WithToken on ctx) and
// decodes a 2xx answer into out (nil for none).
func Do(ctx context.Context, client *http.Client, r *Request, out any) error {
	unavailable := r.Unavailable
	if unavailable == nil {
		unavailable = func(format string, args ...any) error {
			return structs.Errorf(structs.KindUnavailable, format, args...)
		}
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return err
	}
	req.Header.Set(r.Marker, "1")
	// The caller's own token: the other agent checks it as its route's
	// access level requires.
	httpx.SetToken(ctx, req)
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return unavailable("reach %s: %v", r.Peer, withoutURL(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return unavailable("read %s's answer: %v", r.Peer, err)
	}
	if resp.StatusCode/100 != 2 {
		var e ErrorBody
		if json.Unmarshal(raw, &e) != nil || e.Kind == "" {
			return unavailable("%s answered %s", r.Peer, resp.Status)
		}
		return &structs.Error{Kind: structs.ErrorKind(e.Kind), Type: e.Type, Msg: e.Error}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode %s's answer: %w", r.Peer, err)
	}
	return nil
}

// withoutURL drops the URL from a client error: it is noise to the user.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// WriteJSON writes v as a JSON answer with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// WriteError writes err as the native API does (its kind's status by
// route.Default), with typ (the error's type, "" for none);
// notSupported makes it a 501.
func WriteError(w http.ResponseWriter, err error, typ string, notSupported bool) {
	status, _ := route.Default.Of(err)
	if notSupported {
		status = http.StatusNotImplemented
	}
	WriteJSON(w, status, ErrorBody{Error: structs.Message(err), Kind: string(structs.KindOf(err)), Type: typ})
}
