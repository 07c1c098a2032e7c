package server

import (
	"fmt"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// deletedPurgeMaxEntries bounds how many purge entries one run of the
// leader's duty proposes (each at most structs.DeletedPurgeBatch
// instances): a large backlog, such as the first run after the
// retention is shortened, is worked through over several minutes
// instead of holding the Raft log in one burst. The operator's
// purge-deleted goes until nothing is left.
const deletedPurgeMaxEntries = 20

// purgeDeleted proposes purges of the records of instances deleted
// longer than the configured retention ago, when there are any; a
// negative retention keeps them forever.
func (s *Server) purgeDeleted(now time.Time) error {
	if s.config.DeletedRetention < 0 {
		return nil
	}
	before := now.Add(-s.config.DeletedRetention).UnixNano()
	purged, entries, _, err := s.purgeDeletedBefore(before, deletedPurgeMaxEntries)
	if purged > 0 {
		s.logger.Debug("purged deleted instances' records", "instances", purged, "entries", entries,
			"deleted_before", time.Unix(0, before).UTC().Format(time.RFC3339))
	}
	return err
}

// purgeDeletedBefore proposes purge entries with cut-off before until
// no instance deleted before it has records left, or maxEntries were
// committed (0: no bound). It returns how many instances were purged,
// in how many entries, and the last entry's index. Nothing is proposed
// when nothing is that old, so an idle cluster writes nothing. The
// entry is ignorable: a server too old to know it keeps the records.
func (s *Server) purgeDeletedBefore(before int64, maxEntries int) (purged, entries int, index uint64, err error) {
	for maxEntries <= 0 || entries < maxEntries {
		oldest, ok, err := s.fsm.State().OldestDeleted()
		if err != nil || !ok || oldest >= before {
			return purged, entries, index, err
		}
		b, err := structs.EncodeEntry(structs.DeletedPurgeType|structs.IgnoreUnknownTypeFlag,
			&structs.DeletedPurgeEntry{Before: before, Limit: structs.DeletedPurgeBatch})
		if err != nil {
			return purged, entries, index, err
		}
		idx, resp, err := s.raftApply(b)
		if err != nil {
			return purged, entries, index, fmt.Errorf("%s: %w", structs.DeletedPurgeType, err)
		}
		res, ok := resp.(*structs.DeletedPurgeResult)
		if !ok {
			return purged, entries, index, fmt.Errorf("%s answered %T", structs.DeletedPurgeType, resp)
		}
		purged, entries, index = purged+res.Purged, entries+1, idx
		if !res.More {
			return purged, entries, index, nil
		}
	}
	return purged, entries, index, nil
}
