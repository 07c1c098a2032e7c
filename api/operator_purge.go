package api

import (
	"net/http"
	"time"
)

// PurgeDeletedResponse says what a purge of deleted instances' records
// did: how many deleted instances it purged, in how many Raft entries,
// and the last entry's index (0 when there was nothing to purge).
type PurgeDeletedResponse struct {
	Purged  int
	Entries int
	Index   uint64
}

// PurgeDeleted purges now every record (instance actions and events,
// usage records, migrations) of the instances deleted before before,
// whatever the servers' deleted_retention. Admin only.
func (o *Operator) PurgeDeleted(before time.Time) (*PurgeDeletedResponse, error) {
	var out PurgeDeletedResponse
	body := struct{ Before time.Time }{Before: before.UTC()}
	if _, err := o.c.write(http.MethodPost, "/v1/operator/purge-deleted", nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
