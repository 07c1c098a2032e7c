package agent

import (
	"net/http"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// purgeDeletedJSON is the body of POST /v1/operator/purge-deleted: the
// cut-off (RFC 3339); records of instances deleted before it are purged.
type purgeDeletedJSON struct {
	Before time.Time
}

// purgeDeleted purges deleted instances' records older than the body's
// cut-off now (cloudctl operator purge-deleted).
func (a *Agent) purgeDeleted(w http.ResponseWriter, r *http.Request) (any, error) {
	var body purgeDeletedJSON
	if err := decodeJSON(w, r, &body); err != nil {
		return nil, err
	}
	if body.Before.IsZero() || body.Before.UnixNano() <= 0 {
		return nil, structs.Errorf(structs.KindInvalid, "Before (an RFC 3339 time after 1970) is required")
	}
	args := structs.DeletedPurgeRequest{Before: body.Before.UnixNano()}
	args.AuthToken = requestToken(r)
	var out structs.DeletedPurgeResponse
	if err := a.rpc.RPC("Operator.PurgeDeleted", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return map[string]any{"Purged": out.Purged, "Entries": out.Entries, "Index": out.Index}, nil
}

// mustRetention parses a deleted_retention Validate already accepted.
func mustRetention(v string) time.Duration {
	d, _ := deletedRetention(v)
	return d
}
