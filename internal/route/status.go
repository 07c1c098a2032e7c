package route

import (
	"errors"
	"maps"
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// Statuses maps error kinds (structs.ErrorKind, which survive RPC hops)
// to HTTP statuses. Every API starts from Default and adjusts the kinds
// its ecosystem answers otherwise (With).
type Statuses map[structs.ErrorKind]int

// Default is the mapping of the native API and Nova; the other APIs
// change a few kinds (Neutron answers a quota with 409, Glance with 413,
// Keystone a refused credential with 401).
var Default = Statuses{
	structs.KindInvalid:         http.StatusBadRequest,
	structs.KindNotFound:        http.StatusNotFound,
	structs.KindConflict:        http.StatusConflict,
	structs.KindUnauthenticated: http.StatusUnauthorized,
	structs.KindPermission:      http.StatusForbidden,
	structs.KindQuotaReached:    http.StatusForbidden,
	structs.KindTooLarge:        http.StatusRequestEntityTooLarge,
	structs.KindNoLeader:        http.StatusServiceUnavailable,
	structs.KindUnavailable:     http.StatusServiceUnavailable,
	structs.KindInternal:        http.StatusInternalServerError,
}

// With returns a copy of s with over's kinds changed.
func (s Statuses) With(over Statuses) Statuses {
	out := maps.Clone(s)
	maps.Copy(out, over)
	return out
}

// Of is the status of err: 413 for a body over its limit
// (http.MaxBytesError), else its kind's, else 500. known is false when
// the kind is not in the table (the answer should then not repeat the
// error's text, which may be internal).
func (s Statuses) Of(err error) (status int, known bool) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge, true
	}
	k := structs.KindOf(err)
	if st, ok := s[k]; ok && k != structs.KindInternal {
		return st, true
	}
	return http.StatusInternalServerError, false
}
