package nova

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// fault is an error with the HTTP status Nova answers it with.
type fault struct {
	status int
	msg    string
}

func (f *fault) Error() string { return f.msg }

// faultf builds a fault with a status and a message.
func faultf(status int, format string, args ...any) error {
	return &fault{status: status, msg: fmt.Sprintf(format, args...)}
}

// badRequest is Nova's 400 with a message.
func badRequest(format string, args ...any) error {
	return faultf(http.StatusBadRequest, format, args...)
}

// notFound is Nova's 404 with a message.
func notFound(format string, args ...any) error {
	return faultf(http.StatusNotFound, format, args...)
}

// Nova's fixed messages.
const (
	msgAuthRequired   = "The request you have made requires authentication."
	msgNotFound       = "The resource could not be found."
	msgBadRequest     = "The server could not comply with the request since it is either malformed or otherwise incorrect."
	msgNotSupported   = "The requested functionality is not supported."
	msgMethodNotAllow = "The method specified is not allowed for this resource."
	msgUnexpected     = "Unexpected API Error. Please report this at http://bugs.launchpad.net/nova/ and attach the Nova API log if possible."
)

// notSupported is Nova's answer to what a deployment cannot do (common.
// raise_feature_not_supported): 501 "The requested functionality is not
// supported." Clients such as python-openstackclient expect it, for
// instance to skip a hypervisor's uptime.
func notSupported() error {
	return faultf(http.StatusNotImplemented, msgNotSupported)
}

// policyFault is Nova's 403 for a policy rule the caller does not pass.
func policyFault(rule string) error {
	return faultf(http.StatusForbidden, "Policy doesn't allow %s to be performed.", rule)
}

// faultNames are the body keys of Nova's faults by status; any other
// status is a computeFault.
var faultNames = map[int]string{
	http.StatusBadRequest:            "badRequest",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "itemNotFound",
	http.StatusMethodNotAllowed:      "badMethod",
	http.StatusConflict:              "conflictingRequest",
	http.StatusRequestEntityTooLarge: "overLimit",
	http.StatusUnsupportedMediaType:  "badMediaType",
	http.StatusTooManyRequests:       "overLimit",
	http.StatusNotImplemented:        "notImplemented",
	http.StatusServiceUnavailable:    "serviceUnavailable",
}

// statuses are the HTTP statuses of the servers' error kinds: Nova's
// are the kit's defaults (a quota reached is a 403).
var statuses = route.Default

// statusOf is the status and message Nova answers an error with: a fault
// keeps its own; a body over its limit is a 413; an RPC error's kind picks
// the status and shows its message; anything else is a 500 whose text,
// perhaps internal, stays in the log.
func statusOf(err error) (int, string) {
	var f *fault
	if errors.As(err, &f) {
		return f.status, f.msg
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge, "Request is too large."
	}
	status, known := statuses.Of(err)
	if !known {
		return http.StatusInternalServerError, msgUnexpected
	}
	return status, structs.Message(err)
}

// faultBody is Nova's error body: {"<name>": {"code": N, "message": "…"}}.
func faultBody(status int, msg string) map[string]any {
	name, ok := faultNames[status]
	if !ok {
		name = "computeFault"
	}
	return map[string]any{name: map[string]any{"code": status, "message": msg}}
}

// OverLimitBody is Nova's answer to a request over a limit (413 for a
// body too large, 429 for too many requests): the overLimit fault, with
// retryAfter (seconds, as a string, as Nova's rate limiter sent it) when
// positive. The caller sets Retry-After to the same value.
func OverLimitBody(status int, msg string, retryAfter int) map[string]any {
	f := map[string]any{"code": status, "message": msg}
	if retryAfter > 0 {
		f["retryAfter"] = strconv.Itoa(retryAfter)
	}
	return map[string]any{"overLimit": f}
}
