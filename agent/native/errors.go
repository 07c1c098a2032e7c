package native

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// ErrorBody is the body of every error answer of the native API.
type ErrorBody struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// The error kinds of the HTTP layer alone, beside the servers' kinds
// (structs.ErrorKind).
const (
	// KindTooLarge is a request body over the API's limit.
	KindTooLarge structs.ErrorKind = "request too large"
	// KindMethodNotAllowed is a method the path has no route for.
	KindMethodNotAllowed structs.ErrorKind = "method not allowed"
)

// statuses maps error kinds to HTTP statuses: the kit's defaults and the
// HTTP layer's own kinds.
var statuses = route.Default.With(route.Statuses{
	KindTooLarge:         http.StatusRequestEntityTooLarge,
	KindMethodNotAllowed: http.StatusMethodNotAllowed,
})

// writeError answers err: its kind's status, and its message and kind in
// the native body. An unknown kind is a 500 that still says what went
// wrong, for the operator the native API serves.
func writeError(w http.ResponseWriter, err error) {
	kind := structs.KindOf(err)
	msg := structs.Message(err)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		kind, msg = KindTooLarge, fmt.Sprintf("request body is larger than %d bytes", tooBig.Limit)
	}
	status, _ := statuses.Of(err)
	w.Header().Set("Content-Type", "application/json")
	if kind == structs.KindUnauthenticated {
		w.Header().Set("WWW-Authenticate", `Bearer realm="stratus"`)
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(ErrorBody{Error: msg, Kind: string(kind)})
}
