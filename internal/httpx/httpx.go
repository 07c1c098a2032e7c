// Package httpx holds the HTTP plumbing the agent's APIs share — strict
// JSON decoding, finding which methods a route table allows for a path,
// and the external URL a request reached (trusted proxies' forwarded
// headers and the public URL) — so the native, identity and compute APIs
// differ only in how they word their errors. It must not know any API's
// error format, and must never believe a forwarded header from an
// address that is not a configured proxy.
package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// Reasons a strict decode fails; callers map them to their own bodies.
var (
	// ErrEmptyBody means the body had no JSON value.
	ErrEmptyBody = errors.New("request body is empty")
	// ErrTrailingData means something followed the JSON value.
	ErrTrailingData = errors.New("request body has data after the JSON value")
)

// DecodeStrict reads exactly one JSON value of at most limit bytes into
// out, refusing unknown fields. Errors are ErrEmptyBody, ErrTrailingData,
// an *http.MaxBytesError, or the decoder's own error (bad syntax, wrong
// type, unknown field).
func DecodeStrict(w http.ResponseWriter, r *http.Request, limit int64, out any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		if errors.Is(err, io.EOF) {
			return ErrEmptyBody
		}
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return ErrTrailingData
	}
	return nil
}

type tokenKey struct{}

// WithToken returns ctx carrying the caller's identity token, so a
// request one agent forwards to another on the caller's behalf presents
// the caller's own credential there.
func WithToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// Token returns the identity token WithToken put in ctx, or "".
func Token(ctx context.Context) string {
	t, _ := ctx.Value(tokenKey{}).(string)
	return t
}

// SetToken sets the header a forwarded request carries the caller's
// token in, when ctx has one.
func SetToken(ctx context.Context, req *http.Request) {
	if t := Token(ctx); t != "" {
		req.Header.Set("X-Auth-Token", t)
	}
}
