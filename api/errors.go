package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Error kinds carried in the "kind" field of an error body.
const (
	KindInvalid       = "invalid"
	KindNotFound      = "not found"
	KindConflict      = "conflict"
	KindNoLeader      = "no leader"
	KindPermission    = "permission denied"
	KindUnavailable   = "unavailable"
	KindInternal      = "internal"
	KindQuotaExceeded = "quota exceeded"
)

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// Error is a non-2xx answer of the API. The server sends
// {"error":"<message>","kind":"<kind>"}; a body that is not such JSON is kept
// as the Message with an empty Kind.
type Error struct {
	// StatusCode is the HTTP status code.
	StatusCode int
	// Kind is one of the Kind constants, or "" when the body had none.
	Kind string
	// Message is the server's error text.
	Message string
}

// Error reads like `Unexpected response code 404 (not found: flavor "9" not found)`.
func (e *Error) Error() string {
	msg := e.Message
	switch {
	case msg == "":
		msg = http.StatusText(e.StatusCode)
		if e.Kind != "" {
			msg = e.Kind
		}
	case e.Kind != "" && !strings.HasPrefix(msg, e.Kind+":"):
		msg = e.Kind + ": " + msg
	}
	return fmt.Sprintf("Unexpected response code %d (%s)", e.StatusCode, msg)
}

// IsKind reports whether err is, or wraps, an *Error of the given kind.
func IsKind(err error, kind string) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == kind
}

// IsNotFound reports whether err is, or wraps, a "not found" *Error.
func IsNotFound(err error) bool { return IsKind(err, KindNotFound) }

// decodeError reads resp's body into an *Error.
func decodeError(resp *http.Response) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{StatusCode: resp.StatusCode}
	var body struct {
		Error string `json:"error"`
		Kind  string `json:"kind"`
	}
	if json.Unmarshal(raw, &body) == nil && (body.Error != "" || body.Kind != "") {
		e.Message, e.Kind = body.Error, body.Kind
	} else {
		e.Message = strings.TrimSpace(string(raw))
	}
	if e.Message == "" && err != nil {
		e.Message = "reading error body: " + err.Error()
	}
	return e
}
