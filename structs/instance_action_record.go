package structs

// InstanceActionRecordRequest records an instance action that ran
// outside the task engine, once it finished: changePassword, which the
// API carries out synchronously on the agent of the instance's host.
// It carries no argument of the action (never the password).
type InstanceActionRecordRequest struct {
	InstanceID string
	// RequestID names the action, as for any action.
	RequestID string
	// Action is Nova's name (changePassword) and Event its one event
	// (compute_set_admin_password).
	Action string
	Event  string
	// HostID is the host the event ran on.
	HostID string
	// StartTime and FinishTime are unix nanoseconds, chosen by the
	// caller before the entry is proposed.
	StartTime  int64
	FinishTime int64
	// Error is the event's failure ("" for success).
	Error string
	// Caller: a project's member may record actions of its project's
	// instances only.
	ProjectID string
	UserID    string
	Admin     bool
	WriteRequest
}

// InstanceActionRecordEntry is the Raft entry of a recorded action: the
// action with its event, finished.
type InstanceActionRecordEntry struct {
	Action *InstanceAction
}
