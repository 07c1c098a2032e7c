package native

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/structs"
)

// maxJSONBody bounds every JSON request body; larger ones are refused
// before they are read into memory.
const maxJSONBody = 1 << 20

// decodeJSON reads exactly one JSON value into out, refusing unknown
// fields, trailing data and bodies over maxJSONBody.
func decodeJSON(w http.ResponseWriter, q *request, out any) error {
	err := httpx.DecodeStrict(w, q.Request, maxJSONBody, out)
	var tooBig *http.MaxBytesError
	switch {
	case err == nil, errors.As(err, &tooBig):
		return err
	case errors.Is(err, httpx.ErrEmptyBody), errors.Is(err, httpx.ErrTrailingData):
		return structs.Errorf(structs.KindInvalid, "%v", err)
	default:
		return structs.Errorf(structs.KindInvalid, "request body is not valid: %v", err)
	}
}

// parseQuery fills blocking-query options from ?index=, ?wait=, ?stale.
// (The caller's token is stamped by the request's RPC.)
func parseQuery(q *request, opts *structs.QueryOptions) error {
	v := q.URL.Query()
	if s := v.Get("index"); s != "" {
		idx, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return structs.Errorf(structs.KindInvalid, "index %q is not a non-negative integer", s)
		}
		opts.MinQueryIndex = idx
	}
	if s := v.Get("wait"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return structs.Errorf(structs.KindInvalid, "wait %q is not a duration such as 30s", s)
		}
		opts.MaxQueryTime = d
	}
	if v.Has("stale") {
		opts.AllowStale = v.Get("stale") != "false"
	}
	return nil
}

// boolParam reads a boolean URL parameter: absent is false, present
// without a value ("?force") or "true" is true, "false" is false.
func boolParam(q *request, name string) (bool, error) {
	v := q.URL.Query()
	if !v.Has(name) {
		return false, nil
	}
	switch v.Get(name) {
	case "", "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, structs.Errorf(structs.KindInvalid, "%s %q is not true or false", name, v.Get(name))
}

// setMeta writes a read's index and leader headers.
func setMeta(w http.ResponseWriter, m *structs.QueryMeta) {
	w.Header().Set("X-Stratus-Index", strconv.FormatUint(m.Index, 10))
	w.Header().Set("X-Stratus-KnownLeader", strconv.FormatBool(m.KnownLeader))
	w.Header().Set("X-Stratus-LastContact", strconv.FormatInt(m.LastContact.Milliseconds(), 10))
}

// setIndex writes a write's index header.
func setIndex(w http.ResponseWriter, index uint64) {
	w.Header().Set("X-Stratus-Index", strconv.FormatUint(index, 10))
}

// notFound is the error of a read whose RPC answered no object.
func notFound(what, id string) error {
	return structs.Errorf(structs.KindNotFound, "%s %q not found", what, id)
}
