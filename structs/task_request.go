package structs

// TaskIdempotency ties an InstanceTaskEntry to its client's idempotency
// key, as CreateIdempotency does a create's. The state machine applies
// at most one task per project and key: a later entry with the same key
// changes nothing and answers the first one's record (a
// *TaskRequest in the FSM's TaskAlreadyApplied).
type TaskIdempotency struct {
	// ProjectID scopes the key: the caller's project, chosen by the
	// leader, so that the FSM needs no other lookup.
	ProjectID string
	Key       string
	// Fingerprint summarises what was asked (instance, operation and
	// its arguments), so that a key reused for a different task is
	// refused rather than answered with another task's action.
	Fingerprint string
}

// TaskRequest is the record of one committed task by idempotency key:
// which instance action (and migration) it started, and when. ID is
// TaskRequestID(ProjectID, Key). Records share the create requests'
// lifetime (CreateRequestTTL) and purge (CreateRequestPurgeEntry).
type TaskRequest struct {
	ID          string
	ProjectID   string
	Key         string
	Fingerprint string
	InstanceID  string
	Op          string
	// RequestID is the instance action the task reports to.
	RequestID string
	// MigrationID is the migration a move created (its entry's index), 0
	// for none.
	MigrationID uint64
	// ImageID is the image a snapshot or backup writes, "" for others.
	ImageID string
	// CreatedAt is the task entry's timestamp (chosen by the leader
	// before proposal), which the purge compares against.
	CreatedAt   int64
	CreateIndex uint64
	ModifyIndex uint64
}

// TaskRequestID is the state's key of a task request record: keys are
// per project, as create keys are.
func TaskRequestID(projectID, key string) string {
	return projectID + "\x00" + key
}
