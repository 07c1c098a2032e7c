package structs

import "time"

// DefaultDeletedRetention is how long the records of a deleted instance
// (its instance actions and events, its usage record, its migrations)
// stay in the state when the server configuration does not say
// (server { deleted_retention }): long enough to read what happened to
// a server deleted yesterday (os-instance-actions from 2.21) and to
// report a day's usage (os-simple-tenant-usage), short enough that a
// cloud that boots and deletes servers all day does not grow its state
// and snapshots without bound. Nova keeps them until an operator runs
// nova-manage db archive_deleted_rows and purge; Stratus purges them
// itself, through Raft, the same way on every server.
const DefaultDeletedRetention = 24 * time.Hour

// DeletedPurgeBatch is how many deleted instances the leader asks one
// DeletedPurgeEntry to purge: the entry stays small and its transaction
// short, and a backlog is worked through in several entries.
const DeletedPurgeBatch = 500

// DeletedPurgeMaxBatch bounds what one DeletedPurgeEntry purges whatever
// its Limit says (and is the batch of an entry without a Limit). It is
// part of the entry's meaning: never change it.
const DeletedPurgeMaxBatch = 10000

// DeletedPurgeEntry purges the records of instances deleted before
// Before, unix nanoseconds (DeletedPurgeType): at most Limit instances,
// oldest deletion first. The proposer chooses Before (now minus the
// retention, or an operator's cut-off), so every replica removes the
// same records whatever its clock. Applying it answers a
// *DeletedPurgeResult.
type DeletedPurgeEntry struct {
	Before int64
	Limit  int
}

// DeletedPurgeResult is what applying a DeletedPurgeEntry did: how many
// deleted instances it purged, and whether more were deleted before its
// cut-off than its limit allowed.
type DeletedPurgeResult struct {
	Purged int
	More   bool
}

// DeletedPurgeRequest asks for the records of instances deleted before
// Before (unix nanoseconds) to be purged now, as nova-manage db purge
// --before does (`cloudctl operator purge-deleted`). Admin only.
type DeletedPurgeRequest struct {
	Before int64
	WriteRequest
}

// DeletedPurgeResponse answers DeletedPurgeRequest: how many deleted
// instances were purged, in how many Raft entries; Index is the last
// entry's (0 when there was nothing to purge).
type DeletedPurgeResponse struct {
	Purged  int
	Entries int
	WriteMeta
}
